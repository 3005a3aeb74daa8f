"""run_eval end to end over scripted engines: scores, one row per scheme, fidelity, resume,
Chimera fusion, and the refusals that come before any model loads."""
from __future__ import annotations

import json

import pytest
import sacrebleu

from hymt.errors import InvalidInputError, UnsupportedTemplateError
from hymt.eval import Corpus, EvalPlan, ModelSettings, run_eval
from hymt.eval.runner import EVAL_OPTIONS
from hymt.languages import get_language

from .conftest import ANSWERS, FUSION_HEAD, REFERENCES, SOURCES, scripted_answer

ZH, EN = get_language("zh"), get_language("en")


def plan_for(model_dir, tmp_path, **kwargs) -> EvalPlan:
    kwargs.setdefault("work_dir", tmp_path / "work")
    return EvalPlan(ModelSettings(str(model_dir), device="cpu"), progress=False, **kwargs)


def corpus_of(files, references=True) -> Corpus:
    src, ref = files
    return Corpus.from_files(src, ref if references else None, source=EN, target=ZH)


def test_scores_match_sacrebleu_on_the_written_outputs(tiny_dir, tmp_path, corpus_files, scripted_factory):
    out = tmp_path / "hyp.zh"
    report = run_eval(plan_for(tiny_dir, tmp_path, output=out, ter=True), corpus_of(corpus_files),
                      factory=scripted_factory(tiny_dir))
    outputs = out.read_text(encoding="utf-8").splitlines()
    assert outputs == [ANSWERS[s] for s in SOURCES]
    (row,) = report.rows
    assert row.score("BLEU") == pytest.approx(sacrebleu.corpus_bleu(outputs, [REFERENCES], tokenize="zh").score)
    assert row.score("chrF++") == pytest.approx(sacrebleu.corpus_chrf(outputs, [REFERENCES], word_order=2).score)
    assert row.score("TER") == pytest.approx(sacrebleu.corpus_ter(outputs, [REFERENCES], asian_support=True).score)
    assert "tok:zh" in row.scores[0].signature and "nw:2" in row.scores[1].signature
    assert row.stats.requests == len(SOURCES) and row.stats.completion_tokens > 0 and row.fidelity is None


def test_one_row_per_scheme_with_fidelity_against_bf16(tiny_dir, tmp_path, corpus_files, scripted_factory):
    def int4_answer(user, params):  # int4 gets one sentence wrong
        return "错误" if "cat" in user else scripted_answer(user, params)

    factory = scripted_factory(tiny_dir, {"int4": int4_answer})
    json_path = tmp_path / "r.json"
    report = run_eval(plan_for(tiny_dir, tmp_path, schemes=("bf16", "int8", "int4"), output=tmp_path / "h.txt"),
                      corpus_of(corpus_files), factory=factory)
    report.write_json(json_path)
    assert [r.label for r in report.rows] == ["bf16", "int8", "int4"]
    assert list(factory.engines) == ["bf16", "int8", "int4"]
    bf16, int8, int4 = report.rows
    assert bf16.fidelity.score == pytest.approx(100.0) and int8.fidelity.score == pytest.approx(100.0)
    assert int4.fidelity.score < 100.0 and int4.score("BLEU") < bf16.score("BLEU")
    assert [r.outputs_path.name for r in report.rows] == ["h.bf16.txt", "h.int8.txt", "h.int4.txt"]
    data = json.loads(json_path.read_text(encoding="utf-8"))
    assert data["mode"] == "compare-quantization" and len(data["rows"]) == 3
    assert data["rows"][2]["fidelity_chrf"]["score"] < 100 and data["rows"][0]["scores"]["BLEU"]["signature"]
    assert data["rows"][0]["memory"]["kind"] in ("cpu_rss_growth", "n/a") and data["options"]["use_cache"] is False


def test_without_references_compares_schemes_only(tiny_dir, tmp_path, corpus_files, scripted_factory):
    corpus = corpus_of(corpus_files, references=False)
    plan = plan_for(tiny_dir, tmp_path, schemes=("bf16", "int8"))
    report = run_eval(plan, corpus, factory=scripted_factory(tiny_dir))
    assert [r.scores for r in report.rows] == [(), ()]
    assert [r.fidelity.score for r in report.rows] == [pytest.approx(100.0), pytest.approx(100.0)]
    assert "BLEU" not in report.format().splitlines()[3]  # the table's header
    with pytest.raises(InvalidInputError, match="--ref is required") as err:
        run_eval(plan_for(tiny_dir, tmp_path), corpus, factory=scripted_factory(tiny_dir))
    assert err.value.field == "ref"


def test_resume_skips_finished_chunks(tiny_dir, tmp_path, corpus_files, scripted_factory):
    plan = plan_for(tiny_dir, tmp_path, chunk_size=2)
    first = scripted_factory(tiny_dir)
    report = run_eval(plan, corpus_of(corpus_files), factory=first)
    assert len(first.engines["bf16"].prompts) == 1 + 5  # warm-up + every sentence
    (work_file,) = report.rows[0].work_files
    lines = work_file.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3
    # a run killed while writing its last chunk: that line is cut short
    work_file.write_text("\n".join(lines[:2]) + "\n" + lines[2][:25], encoding="utf-8")
    second = scripted_factory(tiny_dir)
    again = run_eval(plan, corpus_of(corpus_files), factory=second)
    assert [p for p, _ in second.engines["bf16"].prompts][1:] == [p for p, _ in first.engines["bf16"].prompts][-1:]
    assert again.rows[0].stats.resumed_chunks == 2 and again.rows[0].score("BLEU") == report.rows[0].score("BLEU")
    third = scripted_factory(tiny_dir)
    done = run_eval(plan, corpus_of(corpus_files), factory=third)
    assert third.engines == {} and done.rows[0].load_s is None  # nothing left: the model never loads
    assert done.rows[0].stats.resumed_chunks == 3 and done.rows[0].stats.requests == 5


def test_changed_options_do_not_reuse_outputs(tiny_dir, tmp_path, corpus_files, scripted_factory):
    run_eval(plan_for(tiny_dir, tmp_path), corpus_of(corpus_files), factory=scripted_factory(tiny_dir))
    other = scripted_factory(tiny_dir)
    plan = plan_for(tiny_dir, tmp_path, options=EVAL_OPTIONS.replace(retry=False))
    report = run_eval(plan, corpus_of(corpus_files), factory=other)
    assert report.rows[0].stats.resumed_chunks == 0 and len(other.engines["bf16"].prompts) == 6


def test_fusion_sends_n_candidates_and_one_fusion_request_per_sentence(chimera_dir, tmp_path, corpus_files,
                                                                       scripted_factory):
    factory = scripted_factory(chimera_dir)
    report = run_eval(plan_for(chimera_dir, tmp_path, fusion=3), corpus_of(corpus_files), factory=factory)
    prompts = factory.engines["bf16"].prompts[1:]  # after the warm-up
    plain, candidates, fusion = prompts[:5], prompts[5:20], prompts[20:]
    assert len(prompts) == 5 + 5 * 3 + 5 and len(factory.engines) == 1
    assert all(p.seed is None and not u.startswith(FUSION_HEAD) for u, p in plain)
    assert sorted(p.seed for _, p in candidates) == sorted([0, 1, 2] * 5)
    assert all(p.temperature == pytest.approx(0.7) and p.top_k == 20 for _, p in candidates)
    assert all(u.startswith(FUSION_HEAD) and u.count("```") == 2 * 4 for u, _ in fusion)  # source + 3 candidates
    assert "English segment" in fusion[0][0]
    plain_row, fusion_row = report.rows
    assert plain_row.label == "plain" and fusion_row.label == "fusion x3"
    assert plain_row.stats.requests == 5 and fusion_row.stats.requests == 20
    assert set(fusion_row.passes) == {"candidate 1", "candidate 2", "candidate 3", "fusion"}
    assert fusion_row.stats.wall_s == pytest.approx(sum(s.wall_s for s in fusion_row.passes.values()))
    fused = fusion_row.outputs_path.read_text(encoding="utf-8").splitlines()
    assert fused[0] == "融合：" + ANSWERS[SOURCES[0]] + "（候选2）"
    assert "fusion cost: 20 requests" in report.format()


def test_fusion_keeps_a_multi_sentence_line_whole(chimera_dir, tmp_path, scripted_factory):
    line = "Hello world. It is raining today."
    src, ref = tmp_path / "s.en", tmp_path / "r.zh"
    src.write_text(line + "\n", encoding="utf-8")
    ref.write_text("你好，世界。今天下雨了。\n", encoding="utf-8")
    factory = scripted_factory(chimera_dir)
    run_eval(plan_for(chimera_dir, tmp_path, fusion=1), Corpus.from_files(src, ref, source=EN, target=ZH),
             factory=factory)
    fusion = [u for u, _ in factory.engines["bf16"].prompts if u.startswith(FUSION_HEAD)]
    assert len(fusion) == 1 and f"```{line}```" in fusion[0]


def test_fusion_refusals(tiny_dir, chimera_dir, tmp_path, corpus_files, scripted_factory):
    factory = scripted_factory(tiny_dir)
    refusal = "HY-MT1.5-1.8B has no 'fusion' template .* models with it: Hunyuan-MT-Chimera-7B"
    with pytest.raises(UnsupportedTemplateError, match=refusal) as err:
        run_eval(plan_for(tiny_dir, tmp_path, fusion=2), corpus_of(corpus_files), factory=factory)
    assert err.value.field == "fusion" and factory.engines == {}
    auto = Corpus.from_files(*corpus_files, source=None, target=ZH)
    with pytest.raises(InvalidInputError, match="--fusion needs --from"):
        run_eval(plan_for(chimera_dir, tmp_path, fusion=2), auto, factory=scripted_factory(chimera_dir))
    with pytest.raises(InvalidInputError, match="--fusion takes 1 to 16"):
        plan_for(chimera_dir, tmp_path, fusion=0)
    with pytest.raises(InvalidInputError, match="drop --compare-quantization"):
        plan_for(chimera_dir, tmp_path, fusion=2, schemes=("bf16", "int8"))


def test_unsupported_scheme_fails_before_loading(tiny_dir, tmp_path, corpus_files, scripted_factory, monkeypatch):
    # A GPU without FP8 support (e.g. an A100): the engine's own check names what it supports.
    monkeypatch.setattr("hymt.engine.quant.schemes.supported_schemes", lambda device: ("int8", "int4"))
    factory = scripted_factory(tiny_dir)
    with pytest.raises(InvalidInputError, match=r"--compare-quantization: quantization 'fp8' .*int8, int4") as err:
        run_eval(plan_for(tiny_dir, tmp_path, schemes=("bf16", "fp8")), corpus_of(corpus_files), factory=factory)
    assert err.value.field == "compare_quantization" and factory.engines == {}


def test_quantization_needs_the_native_engine(tiny_dir, tmp_path, corpus_files):
    plan = EvalPlan(ModelSettings(str(tiny_dir), engine="transformers", device="cpu"), schemes=("int8",),
                    work_dir=tmp_path, progress=False)
    with pytest.raises(InvalidInputError, match="needs --engine native"):
        run_eval(plan, corpus_of(corpus_files))
