"""The API reference page documents every module of the package, each once."""

from collections import Counter

from stitchkit.book import apipage


def test_every_module_is_in_exactly_one_section():
    listed = Counter(m for _, _, modules in apipage.sections() for m in modules)
    assert [m for m, n in listed.items() if n > 1] == []
    modules = set(apipage.package_modules())
    assert sorted(modules - set(listed)) == [], "a module missing from the API page's sections"
    assert sorted(set(listed) - modules) == [], "a section names a module that does not exist"


def test_the_page_documents_each_module_from_its_docstrings():
    page = apipage.api_markdown()
    for m in apipage.package_modules():
        assert f".. automodule:: stitchkit.{m}\n   :members:" in page
    assert "`stitchkit.experiments.bansal`" in page and page.startswith("# API reference")
