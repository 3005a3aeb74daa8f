"""Subtitle formats: SubRip (.srt), WebVTT (.vtt) and SubStation Alpha (.ass, .ssa).

Each cue is one unit, never split into sentences, so the translated file has the same cues
with the same timings. The files are line-based, and each format's structure is read here
line by line and written back byte for byte around the translated cue texts
(docs/formats-subtitles.md says why not through a subtitle library).

- lines.py: decoding, and lines that keep their own endings;
- cue_markup.py: a cue's inline markup as numbered tags;
- continuation.py: which cue continues the sentence of the cue before it (`Unit.context`);
- cue_document.py: the parsed document shared by the three formats, and its rendering;
- srt_format.py, vtt_format.py, ass_format.py: each format's structure and markup.
"""
