"""Writes the small office documents the real-server matrix hands markitdown-mcp
(crates/toolwire/tests/mcp_matrix.rs): a .docx, .xlsx and .pptx, each holding words the
test then looks for in the markdown that comes back. Made here, never downloaded: the .docx
is its three XML parts zipped by hand (markitdown reads it with mammoth, which needs no
more), the .xlsx and .pptx come from openpyxl and python-pptx, which markitdown[all]
installs into tests/mcp/venv-markitdown beside it.

Run: venv-markitdown/bin/python office_files.py DIR
"""

import sys
import zipfile
from pathlib import Path

from openpyxl import Workbook
from pptx import Presentation
from pptx.util import Inches

DOCX_TYPES = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">
<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>
<Default Extension="xml" ContentType="application/xml"/>
<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>
</Types>"""

DOCX_RELS = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>
</Relationships>"""

# A paragraph in bold and a two-row table: mammoth turns the run's <w:b/> into **…**.
DOCX_BODY = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">
<w:body>
<w:p><w:r><w:t xml:space="preserve">Quarterly </w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>aardvark</w:t></w:r><w:r><w:t xml:space="preserve"> report</w:t></w:r></w:p>
<w:tbl>
<w:tr><w:tc><w:p><w:r><w:t>region</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>units</w:t></w:r></w:p></w:tc></w:tr>
<w:tr><w:tc><w:p><w:r><w:t>Lisbon</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>4217</w:t></w:r></w:p></w:tc></w:tr>
</w:tbl>
</w:body>
</w:document>"""


def docx(path: Path) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", DOCX_TYPES)
        z.writestr("_rels/.rels", DOCX_RELS)
        z.writestr("word/document.xml", DOCX_BODY)


def xlsx(path: Path) -> None:
    book = Workbook()
    sheet = book.active
    sheet.title = "Inventory"
    for row in (("item", "count"), ("walrus", 31), ("narwhal", 7)):
        sheet.append(row)
    book.save(path)


def pptx(path: Path) -> None:
    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Pangolin roadmap"
    slide.placeholders[1].text = "Ship the quokka release"
    box = slide.shapes.add_textbox(Inches(1), Inches(5), Inches(4), Inches(1))
    box.text_frame.text = "Speaker wombat"
    deck.save(path)


if __name__ == "__main__":
    out = Path(sys.argv[1])
    docx(out / "report.docx")
    xlsx(out / "inventory.xlsx")
    pptx(out / "roadmap.pptx")
