"""Real notebooks for the tests, made with nbformat (as Jupyter would save them)."""

from __future__ import annotations

import base64

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output


def notebook(*cells, assignment: str | None = "autodiff", **metadata) -> nbformat.NotebookNode:
    """A notebook of ``cells``: a str is a code cell, ("md", text) a markdown cell, a node as is."""
    made = []
    for index, cell in enumerate(cells, start=1):
        if isinstance(cell, str):
            made.append(new_code_cell(cell, id=f"cell-{index}"))
        elif isinstance(cell, tuple) and cell[0] == "md":
            made.append(new_markdown_cell(cell[1], id=f"cell-{index}"))
        else:
            made.append(cell)
    if assignment is not None:
        metadata["autodiff_grader"] = {"assignment": assignment}
    return new_notebook(cells=made, metadata=metadata)


def dumps(node: nbformat.NotebookNode) -> bytes:
    return nbformat.writes(node).encode("utf-8")


def with_image(source: str, megabytes: float) -> nbformat.NotebookNode:
    """A code cell whose output holds a PNG of about ``megabytes`` (base64, as Jupyter stores it)."""
    image = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(int(megabytes * 750_000))).decode("ascii")
    cell = new_code_cell(source, execution_count=3,
                         outputs=[new_output("display_data", data={"image/png": image, "text/plain": "<Figure>"})])
    return cell


def widget_cell() -> nbformat.NotebookNode:
    """A cell that shows an ipywidgets slider, with the widget view in its output."""
    view = {"model_id": "0f3c", "version_major": 2, "version_minor": 0}
    return new_code_cell("import ipywidgets as widgets\nslider = widgets.FloatSlider(min=0, max=3)\n"
                         "display(slider)\nslider.observe(lambda change: print(change['new']), names='value')",
                         execution_count=4,
                         outputs=[new_output("display_data", data={
                             "application/vnd.jupyter.widget-view+json": view, "text/plain": "FloatSlider()"})])
