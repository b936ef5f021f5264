"""The HTML report and the summary, made from a hand-made dump folder (tests/fixtures/dump_sample).

The fixture follows the framescope-dump/1 contract of docs/report.md: a function ``f`` compiled
for four values of an argument (three recompiles, caused at prog.py:7), graph breaks at
prog.py:13 and prog.py:15, two resume functions. Its source and several strings hold
``</script><b>``: the report must show them as text.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Dict, List, Set, Tuple
from urllib.parse import unquote, urldefrag

import pytest

from framescope import cli
from framescope.report import DumpError, format_summary, load_dump, write_report

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "dump_sample"
NASTY = "</script><b>"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


@pytest.fixture
def dump_dir(tmp_path: Path) -> Path:
    """A copy of the fixture whose index points at its own prog.py."""
    folder = tmp_path / "dump"
    shutil.copytree(str(FIXTURE), str(folder))
    index = folder / "index.json"
    index.write_text(index.read_text().replace("/fixture/prog.py", str(folder / "prog.py")))
    return folder


def edit_index(folder: Path, change) -> None:
    data = json.loads((folder / "index.json").read_text())
    change(data)
    (folder / "index.json").write_text(json.dumps(data))


class Page(HTMLParser):
    """What a test needs of a page: its links, ids, tags and text."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.links: List[str] = []
        self.ids: Set[str] = set()
        self.tags: List[str] = []
        self.classes: Dict[str, List[str]] = {}
        self.text: List[str] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, str]]) -> None:
        self.tags.append(tag)
        values = dict(attrs)
        if tag == "a" and "href" in values:
            self.links.append(values["href"])
        if "id" in values:
            assert values["id"] not in self.ids, "duplicate id %r" % values["id"]
            self.ids.add(values["id"])
            self.classes[values["id"]] = (values.get("class") or "").split()
        for name in ("src", "srcset"):
            assert name not in values, "the report loads nothing: %s=%r" % (name, values[name])

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def read_page(path: Path) -> Page:
    return Page(path.read_text(encoding="utf-8"))


def report(dump_dir: Path) -> Path:
    return Path(write_report(load_dump(str(dump_dir)), str(dump_dir / "report")))


# --------------------------------------------------------------------------- reading the dump


def test_load_dump_reads_the_contract(dump_dir):
    dump = load_dump(str(dump_dir))
    assert [frame.id for frame in dump.frames] == [
        "f", "torch_dynamo_resume_in_f_at_13", "torch_dynamo_resume_in_f_at_15"]
    f = dump.frame("f")
    assert [entry.index for entry in f.entries] == [0, 1, 2, 3]
    assert f.entries[3].decompiled is False and NASTY in f.entries[3].fallback_reason
    assert f.entries[0].guard[-1] == "L['mode'] == 'sin'"
    assert dump.frame("torch_dynamo_resume_in_f_at_13").resume_of == "f"
    assert dump.graph("__compiled_fn_1").files == {
        "dynamo": "__compiled_fn_1.dynamo.py", "aot_forward": "__compiled_fn_1.aot_forward.py",
        "post_grad": "__compiled_fn_1.post_grad.py", "inductor": "__compiled_fn_1.inductor.py"}
    assert [(r.entry, r.lineno) for r in dump.recompiles] == [(1, 7), (2, 7), (3, 7)]
    assert len(dump.graph_breaks) == 5 and dump.torch == "2.13.0+cpu"


def test_dump_files_stay_inside_the_folder(dump_dir):
    dump = load_dump(str(dump_dir))
    assert dump.file("full_code_for_f.py") == str(dump_dir / "full_code_for_f.py")
    assert dump.file("../dump/full_code_for_f.py") is None
    assert dump.file(str(dump_dir / "full_code_for_f.py")) is None
    assert dump.file("no_such_file.py") is None


@pytest.mark.parametrize("write, message", [
    (None, "does not exist"),
    ("folder", "has no index.json"),
    ("{", "is not valid JSON"),
    ("[]", "expected a JSON object, found a list"),
    ('{"format": "other/9"}', "format is 'other/9'"),
    ('{"format": "framescope-dump/1", "frames": {}}', "frames should be a list of objects"),
    ('{"format": "framescope-dump/1", "frames": [{"id": "f", "entries": [{"index": "0"}]}]}',
     "frames[0].entries[0].index should be an integer, found a string"),
    ('{"format": "framescope-dump/1", "graphs": [{"name": "g", "nodes": true}]}',
     "graphs[0].nodes should be an integer, found a boolean"),
    ('{"format": "framescope-dump/1", "recompiles": [{"reason": 3}]}', "recompiles[0].reason should be a string"),
])
def test_bad_dump_is_a_one_line_error(tmp_path, capsys, write, message):
    folder = tmp_path / "dump"
    if write is not None:
        folder.mkdir()
        if write != "folder":
            (folder / "index.json").write_text(write)
    with pytest.raises(DumpError, match=message.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(")):
        load_dump(str(folder))
    # The command says the same in one line on stderr, exit status 2, nothing written.
    assert cli.main(["report", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and err.startswith("framescope: error: ")
    assert not (folder / "report").exists()


def test_not_a_folder(tmp_path, capsys):
    path = tmp_path / "index.json"
    path.write_text("{}")
    assert cli.main(["report", str(path)]) == 2
    assert "is not a folder" in capsys.readouterr().err


# --------------------------------------------------------------------------- the text summary


def test_summary_names_recompiles_breaks_and_graphs(dump_dir, monkeypatch):
    monkeypatch.chdir(str(dump_dir))
    text = format_summary(load_dump(str(dump_dir)), "somewhere/index.html")
    lines = text.splitlines()
    assert lines[0] == ("framescope: 3 compiled frames, 6 cache entries, 3 recompiles, 2 graph breaks, "
                        "6 graphs; 2.11 s compiling")
    # Each recompile: the failed guard in the user's names, then file:line and the line.
    recompile = lines.index("  f, entry 2 (compile 0/2): guard failed: mode == 'cos' (entry 0/1); "
                            "mode == 'sin' (entry 0/0)")
    assert lines[recompile + 1] == '      prog.py:7: if mode == "sin":'
    # Each distinct break once, with how often it was hit, its reason, line and resume frame.
    first = [i for i, line in enumerate(lines) if line.startswith("  prog.py:13 in f (4 compiles): ")]
    assert len(first) == 1
    assert "`print`" in lines[first[0]]
    assert lines[first[0] + 1:first[0] + 3] == [
        '      print("first break </script><b>")',
        "      continues in torch_dynamo_resume_in_f_at_13, which adds 1 graph and 0.12 s of compiling"]
    assert any(line.startswith("  prog.py:15 in torch_dynamo_resume_in_f_at_13: Call to "
                               "`torch._dynamo.graph_break()`: User-inserted graph break") for line in lines)
    assert "  __compiled_fn_1  f entry 0  inductor  3 nodes, 1 op  inputs f32[4]" in lines
    assert any(line.startswith("  f ") and "4 cache entries, 4 graphs, 1.89 s compiling" in line for line in lines)
    assert lines[-2:] == ["dump:   " + str(dump_dir), "report: somewhere/index.html"]


# --------------------------------------------------------------------------- the HTML report


def test_report_pages_and_stylesheet(dump_dir):
    index = report(dump_dir)
    out = index.parent
    assert index == dump_dir / "report" / "index.html"
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["index.html", "report.css", "frame_f.html", "frame_torch_dynamo_resume_in_f_at_13.html",
         "frame_torch_dynamo_resume_in_f_at_15.html"] + ["graph___compiled_fn_%d.html" % n for n in range(1, 7)])
    css = (out / "report.css").read_text()
    assert ".split" in css and "pre.code" in css


def test_all_text_is_escaped(dump_dir):
    out = report(dump_dir).parent
    for path in out.glob("*.html"):
        text = path.read_text(encoding="utf-8")
        page = Page(text)
        assert NASTY not in text, path.name
        assert "script" not in page.tags and "b" not in page.tags, path.name
    index = read_page(out / "index.html")
    shown = "".join(index.text)
    assert "prog.py " + NASTY in shown  # argv
    assert NASTY in shown.split("Warnings")[1]
    frame = "".join(read_page(out / "frame_f.html").text)
    assert 'print("first break %s")' % NASTY in frame  # the user's source
    assert "print('first break %s')" % NASTY in frame  # the transformed code
    assert "unsupported opcode CALL_INTRINSIC_1 " + NASTY in frame  # the fallback reason


def test_links_resolve_to_files_and_anchors(dump_dir):
    out = report(dump_dir).parent
    pages = {path.name: read_page(path) for path in out.glob("*.html")}
    checked = 0
    for name, page in pages.items():
        for href in page.links:
            assert "://" not in href and not href.startswith("//"), (name, href)
            target, fragment = urldefrag(href)
            target = unquote(target) or name
            path = (out / target).resolve()
            assert path.is_file(), (name, href)
            if fragment:
                assert fragment in pages[target].ids, (name, href)
            checked += 1
    assert checked > 80


def test_links_between_breaks_entries_graphs_and_recompiles(dump_dir):
    out = report(dump_dir).parent
    index = read_page(out / "index.html")
    # recompile -> entry; break -> resume frame; graph -> stages.
    for n in (1, 2, 3):
        assert "frame_f.html#entry-%d" % n in index.links
    assert "frame_torch_dynamo_resume_in_f_at_13.html" in index.links
    assert "frame_torch_dynamo_resume_in_f_at_15.html" in index.links
    assert "graph___compiled_fn_1.html#stage-inductor" in index.links
    frame = read_page(out / "frame_f.html")
    # entry -> graphs and resume frames; source lines marked where things happened.
    assert {"entry-0", "entry-3", "L-4", "L-16", "break-0"} <= frame.ids
    assert "graph___compiled_fn_4.html" in frame.links
    assert "frame_torch_dynamo_resume_in_f_at_13.html" in frame.links
    assert "mark-break" in frame.classes["L-13"] and "mark-recompile" in frame.classes["L-7"]
    assert "#entry-3" in frame.links and "#break-0" in frame.links
    assert "../full_code_for_f.py" in frame.links and "../__transformed_code_3_for_f.py" in frame.links
    resume = read_page(out / "frame_torch_dynamo_resume_in_f_at_15.html")
    assert "mark-resume" in resume.classes["L-15"]
    assert "frame_torch_dynamo_resume_in_f_at_13.html" in resume.links
    graph = read_page(out / "graph___compiled_fn_1.html")
    assert "frame_f.html#entry-0" in graph.links
    # Inductor's kernels are listed and linked to their lines.
    assert "#stage-inductor-L-7" in graph.links and "cpp_fused_sin_0" in "".join(graph.text)


def test_missing_source_and_dump_files(dump_dir):
    (dump_dir / "prog.py").unlink()
    (dump_dir / "__transformed_code_1_for_f.py").unlink()

    def point_outside(data):
        data["frames"][0]["entries"][2]["file"] = "../../etc/passwd"
        data["graphs"][0]["files"]["dynamo"] = "/etc/passwd"
        data["frames"][0]["entries"][0]["calls_resume"].append("no_such_frame")

    edit_index(dump_dir, point_outside)
    out = report(dump_dir).parent
    frame = read_page(out / "frame_f.html")
    text = "".join(frame.text)
    assert "could not be read" in text
    assert "__transformed_code_1_for_f.py is not in the dump folder" in text
    assert "../../etc/passwd is not in the dump folder" in text and "root:" not in text
    assert not any("passwd" in link or "no_such_frame" in link for link in frame.links)
    assert "no_such_frame" in text  # named, but not linked
    assert "root:" not in (out / "graph___compiled_fn_1.html").read_text()


def test_highlighting_with_pygments(dump_dir):
    pytest.importorskip("pygments")
    out = report(dump_dir).parent
    text = (out / "frame_f.html").read_text()
    assert '<span class="k">def</span>' in text
    assert ".hl .k" in (out / "report.css").read_text()


def test_plain_text_without_pygments(dump_dir, monkeypatch):
    # None in sys.modules makes "import pygments" fail, as when it is not installed.
    for name in [m for m in sys.modules if m == "pygments" or m.startswith("pygments.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pygments", None)
    out = report(dump_dir).parent
    text = (out / "frame_f.html").read_text()
    assert '<span class="k">' not in text and "def</span>" not in text
    assert 'print(&quot;first break &lt;/script&gt;&lt;b&gt;&quot;)' in text
    assert ".hl .k" not in (out / "report.css").read_text()


def test_report_command_and_out_option(dump_dir, tmp_path, capsys):
    html_dir = tmp_path / "html"
    assert cli.main(["report", str(dump_dir), "--out", str(html_dir)]) == 0
    assert capsys.readouterr().out.strip() == str(html_dir / "index.html")
    frame = read_page(html_dir / "frame_f.html")
    # Links to the dump's own files are relative to wherever the report is.
    assert "../dump/full_code_for_f.py" in frame.links


def test_distributed_dump_gets_a_page_per_rank(dump_dir, tmp_path, capsys):
    folder = tmp_path / "dist"
    for rank in (0, 1):
        shutil.copytree(str(dump_dir), str(folder / ("rank_%d" % rank)))
    assert cli.main(["report", str(folder)]) == 0
    index = folder / "report" / "index.html"
    assert capsys.readouterr().out.strip() == str(index)
    page = read_page(index)
    assert page.links == ["rank_0/index.html", "rank_1/index.html"]
    assert (folder / "report" / "rank_1" / "frame_f.html").is_file()


# --------------------------------------------------------------------------- a real browser


def browser():
    """Headless Chromium through Selenium; skipped only where Chromium is missing outside CI."""
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        if IN_CI:
            pytest.fail("CI=true but %s or %s is missing (apt-get install chromium chromium-driver)"
                        % (CHROMIUM, CHROMEDRIVER))
        pytest.skip("chromium and chromium-driver are not installed")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        if IN_CI and sys.version_info[:2] == (3, 11):
            pytest.fail("CI=true but selenium, a test dependency on Python 3.11, is missing")
        pytest.skip("selenium is a test dependency on Python 3.11 only")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    options.add_argument("--window-size=1400,1000")  # wide enough for source beside entries
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def check_in_browser(driver, index: Path) -> int:
    """Visit every page and file the report links to; return how many links were checked.

    Each page must load without severe console messages, each link must reach a page of the
    report (or a dump file shown as text) and each #fragment an element on that page. Links
    out of the report (torch's documentation of a graph-break code) are only counted: this
    machine may have no network.
    """
    from selenium.webdriver.common.by import By

    seen: Dict[str, Set[str]] = {}
    links: List[Tuple[str, str]] = []
    queue = [index.as_uri()]
    while queue:
        url = queue.pop()
        if url in seen:
            continue
        driver.get(url)
        severe = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        assert not severe, (url, severe)
        if url.endswith(".html"):
            generator = driver.find_elements(By.CSS_SELECTOR, 'meta[name="generator"]')
            assert generator and generator[0].get_attribute("content").startswith("framescope"), url
            assert not driver.find_elements(By.TAG_NAME, "script") and not driver.find_elements(By.TAG_NAME, "b")
            seen[url] = set(driver.execute_script(
                "return Array.from(document.querySelectorAll('[id]'), e => e.id)"))
            for href in driver.execute_script("return Array.from(document.links, a => a.href)"):
                target = urldefrag(href)[0]
                links.append((url, href))
                if href.startswith(("https://", "http://")):
                    seen.setdefault(target, set())
                    continue
                queue.append(target)
        else:  # a dump file: shown as text, the file's own first line first
            path = Path(unquote(url[len("file://"):]))
            first = path.read_text().splitlines()[0]
            assert driver.execute_script("return document.body.innerText").startswith(first), url
            seen[url] = set()
    for page, href in links:
        target, fragment = urldefrag(href)
        assert target in seen, (page, href)
        if fragment and not href.startswith(("https://", "http://")):
            assert fragment in seen[target], (page, href)
    return len(links)


@pytest.mark.needs_subprocess
def test_report_in_headless_chromium(dump_dir):
    index = report(dump_dir)
    driver = browser()
    from selenium.webdriver.common.by import By

    try:
        assert check_in_browser(driver, index) > 80
        # Clicking: a recompile on the index leads to its cache entry, which is then :target.
        driver.get(index.as_uri())
        driver.find_element(By.CSS_SELECTOR, 'a[href="frame_f.html#entry-2"]').click()
        assert driver.current_url.endswith("/frame_f.html#entry-2")
        assert driver.execute_script("return document.querySelector(':target').id") == "entry-2"
        # A graph break's mark in the source leads to the break's explanation.
        mark = driver.find_element(By.CSS_SELECTOR, '#L-13 a[href="#break-0"]')
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", mark)
        mark.click()
        assert driver.execute_script("return document.querySelector(':target').id") == "break-0"
        # The user's source, escaped in the file, reads as written in the browser.
        text = driver.find_element(By.ID, "L-13").text
        assert 'print("first break </script><b>")' in text
        assert driver.execute_script("return document.querySelectorAll('b, script').length") == 0
    finally:
        driver.quit()


def test_graph_break_codes_link_to_torchs_page_with_the_hints(dump_dir, tmp_path):
    def add_codes(data):
        for brk in data["graph_breaks"]:
            if brk["lineno"] == 13:
                brk.update(gb_code="GB0059", docs="https://example.org/gb/gb0059.html",
                           hints=["Avoid `print` " + NASTY])
            else:
                brk.update(gb_code="GB0025", docs="javascript:alert(1)", hints=[])

    edit_index(dump_dir, add_codes)
    dump = load_dump(str(dump_dir))
    lines = format_summary(dump).splitlines()
    first = next(i for i, line in enumerate(lines) if ":13 in f (4 compiles): " in line)
    assert "prog.py:13 in f (4 compiles): [GB0059] Failed to trace builtin operator" in lines[first]
    assert "graph breaks:" in lines  # codes given: no note about them
    assert lines[first + 3] == "      hint: Avoid `print` " + NASTY
    out = write_report(dump, str(tmp_path / "report"))
    page = (Path(out).parent / "index.html").read_text()
    assert '<a class="gb-code" href="https://example.org/gb/gb0059.html"><code>GB0059</code></a>' in page
    assert '<code class="gb-code">GB0025</code>' in page and "javascript:" not in page  # no link but http(s)
    assert "<li>hint: Avoid `print` &lt;/script&gt;&lt;b&gt;</li>" in page


def test_recompile_advice_names_the_arguments_a_guard_checks():
    from framescope.report.readable import guarded_names, recompile_advice

    assert guarded_names("0/0: L['k'] == 1", ["x", "k"]) == ["k"]
    assert guarded_names("0/0: L['mode'] == 'k'", ["k", "mode"]) == ["mode"]  # 'k' is a value here
    assert guarded_names("tensor 'x' size mismatch at index 0. expected 2, actual 3", ["x", "k"]) == ["x"]
    assert guarded_names("0/0: L['self'].k == 1", ["k", "self"]) == ["self"]  # .k is an attribute
    assert "mark_dynamic(x, dim)" in recompile_advice("tensor 'x' size mismatch", "x", "Tensor")
    assert "dynamic=True" in recompile_advice("k == 1", "k", "int")
    assert "recompile_limit" in recompile_advice("mode == 'a'", "mode", "str")
    assert recompile_advice("type(o) is the type seen when compiling", "o", "Net") is None


def test_library_files_are_named_from_their_package_and_dynamos_names_get_no_advice():
    from framescope.report.readable import is_dynamo_name, library_package, recompile_advice, where
    from framescope.torch_text import recompile_hints

    site = "/venv/lib/python3.11/site-packages/transformers/modeling_utils.py"
    assert where(site, 4769) == "transformers/modeling_utils.py:4769" and library_package(site) == "transformers"
    assert where("/usr/lib/python3.11/logging/__init__.py", 3) == "logging/__init__.py:3"
    assert library_package("/elsewhere/prog.py") is None and library_package("<string>") is None
    assert library_package("<string>", "__create_fn__.<locals>.__init__") == "dataclasses"
    assert is_dynamo_name("___stack2") and is_dynamo_name("___stack0.loss") and not is_dynamo_name("self.k")
    assert recompile_advice("___stack2 == 0", "___stack2", "int") is None
    text = ("6/7: warmup.k == 6    # print(k)  # prog.py:40 in f (HINT: torch.compile considers integer attributes "
            "of the nn.Module to be static. (Or a tensor.))\nUser stack trace:\n  File \"prog.py\", line 40, in f")
    assert recompile_hints(text) == ["torch.compile considers integer attributes of the nn.Module to be static. "
                                     "(Or a tensor.)"]


def test_explain_ranks_what_to_fix_first(dump_dir, capsys):
    from framescope.report.explain import explain_record, format_explain

    dump = load_dump(str(dump_dir))
    text = format_explain(dump).splitlines()
    assert text[0] == "framescope explain: %s" % dump_dir
    # The recompiles of f (3 entries' compile time) first, then the breaks by their resume frames' time.
    firsts = [line for line in text if line[:5] in ("  1. ", "  2. ", "  3. ")]
    assert firsts[0].startswith("  1. f recompiled 3 times: guard failed: mode == 'tan' ")
    assert firsts[0].endswith("(0.98 s compiling)")
    assert firsts[1].startswith("  2. graph break (4 compiles): Failed to trace builtin operator")
    assert firsts[2].startswith("  3. graph break: Call to `torch._dynamo.graph_break()`")
    assert "recompiles:" in text and "graph breaks (torch 2.13.0+cpu gives no graph-break codes):" in text
    # The run summary ends with the same three.
    summary = format_summary(dump).splitlines()
    top = summary.index("worth fixing first:")
    assert [line for line in summary[top:] if line[:5] in ("  1. ", "  2. ", "  3. ")] == firsts
    record = explain_record(dump)
    assert [f["kind"] for f in record["findings"]] == ["recompiles", "graph_break", "graph_break"]
    assert record["findings"][0]["cost_s"] == 0.98 and record["findings"][0]["line"] == 'if mode == "sin":'
    # The command: text, --json, and one line for a folder that is no dump.
    assert cli.main(["explain", str(dump_dir)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == text[0]
    assert cli.main(["explain", str(dump_dir), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == record
    assert cli.main(["explain", str(dump_dir / "prog.py")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    # The report's first section is the same list.
    page = Path(write_report(dump, str(dump_dir / "report"))).read_text()
    section = page[page.index('<section id="worth-fixing">'):]
    assert section.index("<strong>f recompiled 3 times") < section.index("<strong>graph break (4 compiles)")


def test_explain_puts_a_frame_at_its_recompile_limit_first(dump_dir):
    from framescope.report.explain import format_explain

    def limit(data):
        data["recompiles"].append({"frame": "f", "entry": None, "compile_id": "0/4", "reason": "0/3: mode == 'x'",
                                   "filename": data["recompiles"][0]["filename"], "lineno": 7,
                                   "limit": {"name": "recompile_limit", "value": 4},
                                   "arguments": {"mode": {"type": "str", "value": "'y'"}}})

    edit_index(dump_dir, limit)
    text = format_explain(load_dump(str(dump_dir))).splitlines()
    first = next(i for i, line in enumerate(text) if line.startswith("  1. "))
    assert text[first].startswith("  1. f reached torch.compile's recompile_limit (4): calls that no cache entry "
                                  "accepts run without torch.compile")
    # The limit and the recompiles that led to it are one finding; the refused compile is no recompile.
    assert text[first + 2] == "     in f: 3 recompiles on mode, then the recompile limit"
    assert text[first + 3].startswith("     suggestion: each value of mode compiles a cache entry of its own")
    assert not any(line.startswith("  2. f recompiled") for line in text)
    assert "      called with mode = 'y'; compiled for " not in text  # entries of the fixture have no arguments
    assert any(line == "      called with mode = 'y'" for line in text)
    # The summary and the report count the same: the refused compile is no recompile.
    dump = load_dump(str(dump_dir))
    assert format_summary(dump).startswith("framescope: 3 compiled frames, 6 cache entries, 3 recompiles, 2 graph breaks")
    page = Path(write_report(dump, str(dump_dir / "report"))).read_text()
    assert '<p class="totals">3 compiled frames, 6 cache entries, 3 recompiles, 2 graph breaks, 6 graphs.</p>' in page


def test_compile_time_by_phase_is_a_chart_and_a_summary_line(dump_dir, tmp_path):
    def phases(data):
        for frame in data["frames"]:
            for entry in frame["entries"]:
                entry["phases_s"] = {"dynamo": 0.25, "aot": 0.5, "inductor": 0.125, "codegen": 1.0}
                entry["caches"] = {"inductor_fx_hits": 0, "inductor_fx_misses": 1}

    edit_index(dump_dir, phases)
    dump = load_dump(str(dump_dir))
    lines = format_summary(dump).splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("  f "))
    assert lines[first + 1] == "      Dynamo 1.00 s, AOTAutograd 2.00 s, Inductor 0.50 s, codegen 4.00 s"  # 4 entries
    index = Path(write_report(dump, str(tmp_path / "report")))
    page = index.read_text()
    chart = page[page.index('<section id="compile-time">'):]
    chart = chart[:chart.index("</section>")]
    assert chart.count("<svg") == 1 and "<script" not in chart
    assert "<title>f: Dynamo (tracing) 1.00 s</title>" in chart
    assert "<title>f: code generation and kernel compiles 4.00 s</title>" in chart
    assert chart.count('<rect x="') == 4 * len(dump.frames) + 4  # four phases per frame, and the legend
    assert "Compile caches: inductor fx misses %d." % sum(len(f.entries) for f in dump.frames) in chart


def test_a_graph_page_says_what_the_compile_caches_did(dump_dir, tmp_path):
    def served(data):
        graph = data["graphs"][0]
        graph.pop("kernels", None)
        graph.update(caches={"aot_autograd": "hit", "fx_graph": "hit"}, cache_saved_s={"aot_autograd": 1.5})

    edit_index(dump_dir, served)
    out = tmp_path / "html"
    write_report(load_dump(str(dump_dir)), str(out))
    text = " ".join(read_page(out / "graph___compiled_fn_1.html").text)
    assert "served from the compile cache: aot_autograd hit (saved 1.5 s), fx_graph hit" in text
    assert "no files for pre_grad (torch skips those stages on a hit)" in text
    # No kernel lines: the dump left provenance tracking off to keep the caches' keys.
    assert "is on only in a dump with the caches off" in text
    other = " ".join(read_page(out / "graph___compiled_fn_2.html").text)
    assert "served from the compile cache" not in other and "is on only in a dump" not in other


def test_a_failed_compile_is_said_everywhere_and_ranked_first(dump_dir):
    from framescope.report.explain import explain_record, format_explain

    def fail(data):
        data["failures"] = [{"compile_id": "3/0", "function": "whole", "function_filename": "prog.py",
                             "function_lineno": 2, "kind": "Unsupported",
                             "reason": "Data-dependent branching\n  Explanation: Detected data-dependent branching.",
                             "gb_code": "GB0170", "hints": ["make it branchless"], "filename": "prog.py", "lineno": 7,
                             "source_line": "    if x.sum() > 0:"}]

    edit_index(dump_dir, fail)
    dump = load_dump(str(dump_dir))
    summary = format_summary(dump).splitlines()
    assert summary[0].endswith("; 1 compile failed")
    section = summary[summary.index("failed compiles:") + 1:]
    assert section[:3] == ["  whole (compile 3/0) at prog.py:7: Unsupported: [GB0170] Data-dependent branching: "
                           "Detected data-dependent branching.", "      if x.sum() > 0:", "      hint: make it branchless"]
    first = explain_record(dump)["findings"][0]
    assert first["kind"] == "failed_compile" and first["place"] == "prog.py:7" and first["advice"] == "make it branchless"
    assert first["title"] == "whole failed to compile (Unsupported): [GB0170] Data-dependent branching: Detected " \
                             "data-dependent branching."
    assert "failed compiles:" in format_explain(dump)
    page = Path(write_report(dump, str(dump_dir / "report"))).read_text()
    assert '<section id="failures"><h2>Failed compiles</h2>' in page and "<code>whole</code> (compile 3/0)" in page
