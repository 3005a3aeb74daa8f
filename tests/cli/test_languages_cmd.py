import json

from hymt.cli import main


def test_languages_table(capsys):
    assert main(["languages"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["code", "English", "Chinese", "aliases"]
    assert len(lines) == 1 + 38
    assert lines[1].split(None, 3) == ["zh", "Chinese", "中文", "zh-CN, zh-Hans, zh-SG, cn"]
    hant = next(line for line in lines if line.startswith("zh-Hant "))
    assert "Traditional Chinese" in hant and "繁体中文" in hant and "zh-TW" in hant
    # aligned columns: the English name starts at the same column on every row
    assert len({line.index(line.split()[1]) for line in lines[1:]}) == 1


def test_languages_json(capsys):
    assert main(["languages", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 38
    assert rows[-1] == {"code": "yue", "english_name": "Cantonese", "chinese_name": "粤语",
                        "aliases": ["zh-yue"], "scripts": ["Han"]}
