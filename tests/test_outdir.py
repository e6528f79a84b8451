"""The output folder's class-wide files, written entry by entry: the same text as one json.dumps, read back whole."""

from __future__ import annotations

import json

import pytest

from grader.lms_names import Identity, NameSystem
from grader.manifest import Manifest
from grader.outdir import OutputFolder
from grader.scoring import Column

IDENTITIES = {
    "zoe": Identity(NameSystem.PLAIN, "zoe"),
    "müller": Identity(NameSystem.CANVAS, "Müller, Jörg \"JJ\"", lms_id="4711", file_id="99", late=True),
    "anne\\nline": Identity(NameSystem.MOODLE, "Anne\nLine", lms_id="12"),
}


@pytest.mark.parametrize("identities", [IDENTITIES, {}, {"solo": Identity(NameSystem.PLAIN, "solo")}])
def test_identities_are_the_text_of_one_json_document_and_read_back_equal(tmp_path, identities):
    folder = OutputFolder(tmp_path)
    folder.prepare()
    folder.save_identities(identities)
    document = {student: {"system": identity.system.value, "display_name": identity.display_name,
                          "lms_id": identity.lms_id, "file_id": identity.file_id, "late": identity.late}
                for student, identity in sorted(identities.items())}
    text = (tmp_path / "identities.json").read_text(encoding="utf-8")
    assert text == json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    assert folder.identities() == identities


def test_the_manifest_is_the_text_of_one_json_document_and_reads_back_equal(tmp_path):
    folder = OutputFolder(tmp_path)
    folder.prepare()
    manifest = Manifest("autodiff", "d" * 64, 7, "0.2.0", 100, (Column("a", "A", "t", 5.0),),
                        {f"student{number:04d}": None if number % 3 else "no file" for number in range(50)},
                        (("notes.txt", "not a submission"),), title="Détacher")
    folder.save_manifest(manifest)
    text = (tmp_path / "manifest.json").read_text(encoding="utf-8")
    assert text == json.dumps(manifest.to_dict(), indent=2, ensure_ascii=False) + "\n"
    assert folder.manifest() == manifest
