"""Document jobs: a file in, the same file translated out, surviving restarts.

job.py the job and its options; store.py SQLite (WAL) rows, the files on disk and the engine
answers; output_log.py the answers as the SDK's OutputLog; owner.py which process runs a job;
intake.py the checks a file passes first; upload.py receiving one; runner.py running jobs in
the server's event loop. The routes: hymt/server/documents_api.py (native),
protocols/deepl_documents.py, protocols/libretranslate_files.py. docs/DOCUMENTS.md has the
whole picture.
"""
