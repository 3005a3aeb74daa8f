"""XLSX: a workbook built with openpyxl (strings, numbers, dates, formulas, rich text, merged
cells, comments, styles), its units, a marked translation and the identity."""
from __future__ import annotations

import datetime
import io

import openpyxl
import pytest
from openpyxl.cell.rich_text import CellRichText, TextBlock
from openpyxl.cell.text import InlineFont
from openpyxl.comments import Comment
from openpyxl.styles import Font

from hymt.documents import xlsx_format
from hymt.documents.inline_tags import parse_tree


def build_workbook() -> bytes:
    workbook = openpyxl.Workbook()
    sales = workbook.active
    sales.title = "Sales"
    sales["A1"] = "Product"
    sales["A1"].font = Font(bold=True, color="FF0000")
    sales["B1"] = "Price"
    sales["C1"] = "Updated"
    sales["A2"] = "Green apples"
    sales["B2"] = 3.5
    sales["C2"] = datetime.datetime(2024, 5, 1)
    sales["A3"] = "Total for {region}"
    sales["B3"] = "=SUM(B2:B2)"
    sales["A4"] = CellRichText(["Price ", TextBlock(InlineFont(b=True), "includes"), " tax"])
    sales["A5"] = "SKU-1234"
    sales["A6"] = "42"
    sales.merge_cells("A7:C7")
    sales["A7"] = "Prices may change without notice."
    sales["A1"].comment = Comment("Check the names", "Reviewer")
    notes = workbook.create_sheet("Notes")
    notes["A1"] = "Shipped by sea"
    notes["B1"] = True
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


@pytest.fixture(scope="module")
def source() -> bytes:
    return build_workbook()


def test_units_are_string_cells(source):
    units = xlsx_format.parse(source).units
    assert [(u.where, u.text) for u in units] == [
        ("Sales!A1", "Product"),
        ("Sales!B1", "Price"),
        ("Sales!C1", "Updated"),
        ("Sales!A2", "Green apples"),
        ("Sales!A3", "Total for <s1/>"),
        ("Sales!A4", "Price <s1>includes</s1> tax"),
        ("Sales!A5", "SKU-1234"),
        ("Sales!A7", "Prices may change without notice."),
        ("Notes!A1", "Shipped by sea"),
    ]
    assert not any(unit.split for unit in units)


def _values(data: bytes) -> dict[tuple[str, str], object]:
    workbook = openpyxl.load_workbook(io.BytesIO(data), rich_text=True)
    return {(sheet.title, cell.coordinate): cell.value for sheet in workbook.worksheets
            for row in sheet.iter_rows() for cell in row if cell.value is not None}


def test_marked_translation_changes_strings_only(source, marked):
    out = marked(xlsx_format.parse(source))
    before, after = _values(source), _values(out)
    assert before.keys() == after.keys()
    for key, old in before.items():
        new = after[key]
        if isinstance(old, str) and key != ("Sales", "A6") and not old.startswith("="):
            assert new == f"«{old}»" or new == "«Total for »{region}", key
        elif isinstance(old, CellRichText):
            assert [(p.text, p.font.b) if isinstance(p, TextBlock) else p for p in new] == \
                ["«Price »", ("«includes»", True), "« tax»"]
        else:
            assert new == old, key
    workbook = openpyxl.load_workbook(io.BytesIO(out))
    sales = workbook["Sales"]
    assert sales["A1"].font.bold and sales["A1"].font.color.rgb == "00FF0000"
    assert sales["A1"].comment.text == "Check the names"
    assert [str(r) for r in sales.merged_cells.ranges] == ["A7:C7"]
    assert sales["B3"].data_type == "f" and sales["C2"].is_date
    assert workbook.sheetnames == ["Sales", "Notes"]


def test_a_translation_starting_with_equals_stays_text(source):
    document = xlsx_format.parse(source)
    trees = [("=1+1",) if unit.where == "Sales!A2" else parse_tree(unit.text) for unit in document.units]
    cell = openpyxl.load_workbook(io.BytesIO(document.render(trees)))["Sales"]["A2"]
    assert cell.value == "=1+1" and cell.data_type == "s"


def test_identity_translation_gives_back_the_values(source, identity):
    out = identity(xlsx_format.parse(source))
    assert _values(out) == _values(source)
