"""The inspector page (/ui) in a real browser: headless Chromium driven by selenium against real
``memsieve serve`` and ``memsieve ui`` processes.

Needs Chromium and its driver (Debian: ``apt-get install -y chromium chromium-driver``; CI's
.ci/run installs them) and selenium (the ``test`` extra). A missing one fails the tests with
the command that installs it. Slow tier: each test drives a browser against a server.

``MEMSIEVE_UI_SCREENSHOTS=docs/ui`` saves the README's screenshots (desktop and phone width).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from serve_helper import ServeProcess, env, make_keys

pytestmark = pytest.mark.slow

WAIT = 30.0
SHOTS = os.environ.get("MEMSIEVE_UI_SCREENSHOTS")
DESKTOP, PHONE = (1280, 900), (390, 844)


def _chrome():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.fail('the browser tests need selenium: pip install "memsieve[test]" (or pip install selenium)',
                    pytrace=False)
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    driver = shutil.which("chromedriver")
    if browser is None or driver is None:
        missing = " and ".join(n for n, p in (("chromium", browser), ("chromium-driver", driver)) if p is None)
        pytest.fail(f"the browser tests need {missing}: apt-get install -y chromium chromium-driver (Debian; "
                    ".ci/run does this in CI)", pytrace=False)
    opts = Options()
    opts.binary_location = browser
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-extensions", f"--window-size={DESKTOP[0]},{DESKTOP[1]}", "--force-device-scale-factor=1"):
        opts.add_argument(arg)
    return webdriver.Chrome(service=Service(driver), options=opts)


@pytest.fixture(scope="module")
def browser():
    drv = _chrome()
    yield drv
    drv.quit()


@pytest.fixture(scope="module")
def served(tmp_path_factory, embedder):
    """One server over a store with memories, a merge and rejections in ana's scope, one memory of bob's."""
    tmp = tmp_path_factory.mktemp("ui")
    keys = make_keys(tmp / "keys.json", ana={"user_id": "ana"}, ops={"admin": True})
    with ServeProcess(tmp / "mem.db", tmp / "keys.json") as srv:
        ana = {"user_id": "ana"}
        with srv.client(keys["ana"]) as c:
            def add(text, **more):
                r = c.post("/v1/memories", json={"text": text, **ana, **more})
                assert r.status_code == 200, r.text
                return r.json()["decisions"][0]

            add("I drive a red Toyota", source="chat-1")
            again = add("I drive a red Toyota")
            assert c.post(f"/v1/rejections/{again['rejection_id']}/restore", json=ana).status_code == 200
            report = c.post("/v1/consolidate", json={"dry_run": False, **ana}).json()["consolidation"]
            merge = [m for m in report["merges"] if m["status"] == "merged"][0]
            add("My sister Maria lives in Porto", valid_from="2024-05-08", source="chat-2")
            add("I work as a nurse in a hospital")
            add("I moved to Osaka for work", valid_from="2024-03-01T08:00:00+09:00")
            dog = add("My dog is called Bolinha", source="chat-3")
            noop = add("Maria, my sister, lives in Porto", source="chat-4")
            assert noop["event"] == "NOOP" and noop["rejection_id"], noop
            market = add("I love going to the farmers market on Saturday mornings to buy fresh vegetables.",
                         valid_from="2024-05-01")
            told = add("I really love visiting the farmers market every Saturday morning for fresh vegetables "
                       "and flowers.", valid_from="2024-06-20")
            assert told["event"] == "NOOP" and told["memory_id"] == market["memory_id"], told
        with srv.client(keys["ops"]) as c:
            assert c.post("/v1/memories", json={"text": "Bob plays the cello", "user_id": "bob"}).status_code == 200
        yield srv, keys, {"merge": merge, "rejection": noop["rejection_id"], "dog": dog["memory_id"],
                          "market": market["memory_id"], "told": told["rejection_id"]}


def _wait(drv, predicate, what):
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        return WebDriverWait(drv, WAIT).until(lambda d: predicate(d))
    except Exception:
        status = drv.execute_script("return document.getElementById('status').textContent")
        raise AssertionError(f"waited {WAIT} s for {what}; the page's status says {status!r}") from None


def _status(drv):
    return drv.execute_script("return document.getElementById('status').textContent")


def _css(drv, selector):
    from selenium.webdriver.common.by import By

    return drv.find_elements(By.CSS_SELECTOR, selector)


def _click(drv, selector, text=None):
    for e in _css(drv, selector):
        if text is None or text in e.text:
            e.click()
            return e
    raise AssertionError(f"no {selector} with {text!r}")


def _shot(drv, name, size):
    if not SHOTS:
        return
    drv.set_window_size(*size)
    time.sleep(0.3)
    Path(SHOTS).mkdir(parents=True, exist_ok=True)
    drv.save_screenshot(str(Path(SHOTS) / f"{name}.png"))
    drv.set_window_size(*DESKTOP)


def _fits_width(drv):
    return drv.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1")


def _page_checks(drv):
    """Every control is labelled, every action a real button (keyboard-reachable, in document order)."""
    unlabelled = drv.execute_script("""
        return [...document.querySelectorAll('input, select')].filter(e => !e.closest('[hidden]'))
          .filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label')).map(e => e.id);""")
    assert unlabelled == []
    positive_tabindex = drv.execute_script("return document.querySelectorAll('[tabindex]:not([tabindex=\"-1\"])').length")
    assert positive_tabindex == 0


def _sign_in(drv, url, key):
    """Open the page afresh and enter ``key`` (ana's): her scope appears in the list."""
    drv.get(url + "/ui")
    drv.execute_script("sessionStorage.clear()")
    drv.refresh()
    _css(drv, "#key")[0].send_keys(key + "\n")
    _wait(drv, lambda d: "user ana" in d.find_element("id", "scopes").text, "ana's scope in the list")


def test_the_page_searches_restores_a_rejection_and_undoes_a_merge(served, browser):
    srv, keys, made = served
    drv = browser
    _sign_in(drv, srv.url, keys["ana"])
    scopes = drv.find_element("id", "scopes").text
    assert "user bob" not in scopes  # a user key lists its own scopes only
    assert "tau" in scopes and "memories" in scopes
    size_line = drv.find_element("id", "store-size").text
    assert "scope(s)" in size_line and "store size" not in size_line  # the whole store's size is an admin's
    assert drv.execute_script("return sessionStorage.getItem('memsieve-key')") == keys["ana"]
    _click(drv, "#scopes button", "user ana")
    _wait(drv, lambda d: len(_css(d, "#memories li")) >= 4, "ana's memories")
    created = [e.text for e in _css(drv, "#memories li dl div") if e.text.startswith("created")]
    assert created == sorted(created, reverse=True)  # newest first
    assert "chat-3" in drv.find_element("id", "memories").text  # sources shown
    # dated in the offset it was said in, not in UTC (2024-02-29 23:00)
    assert "2024-03-01 08:00 +09:00" in drv.find_element("id", "memories").text
    _page_checks(drv)
    _shot(drv, "memories-desktop", DESKTOP)

    q = drv.find_element("id", "q")
    q.send_keys("what is the dog called\n")
    _wait(drv, lambda d: "result(s)" in d.find_element("id", "mem-caption").text, "search results")
    first = _css(drv, "#memories li")[0]
    assert first.get_attribute("data-id") == made["dog"] and "Bolinha" in first.text
    assert "score" in first.text and "(hybrid)" in first.text
    assert "hybrid search" in drv.find_element("id", "mem-caption").text
    _click(drv, "#memories li button", "History")
    _wait(drv, lambda d: "ADD" in _css(d, "#memories li .detail")[0].text, "the memory's history")

    _click(drv, ".tabs button", "Rejections")
    card = f"#rejections li[data-id='{made['rejection']}']"
    _wait(drv, lambda d: _css(d, card), "the rejection")
    text = _css(drv, card)[0].text
    assert "Maria" in text and "reason" in text and "novelty" in text and "information" in text
    assert "folded into" in text and "lives in Porto" in text.split("folded into", 1)[1]
    assert re.search(r"novelty\s*0\.\d{3}", text) and re.search(r"information\s*0\.\d{3}", text), text
    _shot(drv, "rejections-desktop", DESKTOP)
    _shot(drv, "rejections-phone", PHONE)
    drv.set_window_size(*PHONE)
    assert _fits_width(drv), "the rejections scroll sideways at phone width"
    drv.set_window_size(*DESKTOP)
    button = _css(drv, card + " button")[0]
    assert button.tag_name == "button" and button.text == "Restore"
    button.click()
    _wait(drv, lambda d: "Restored as memory" in _css(d, card)[0].text, "the restore's result")
    restored_id = _css(drv, card + " code")[0].text
    assert _css(drv, card + " button")[0].get_attribute("disabled") is not None
    _click(drv, ".tabs button", "Memories")
    _wait(drv, lambda d: _css(d, f"#memories li[data-id='{restored_id}']"), "the restored memory in the list")
    assert "Maria" in _css(drv, f"#memories li[data-id='{restored_id}']")[0].text

    _click(drv, ".tabs button", "Merges")
    card = f"#merges li[data-id='{made['merge']['id']}']"
    _wait(drv, lambda d: _css(d, card), "the merge")
    assert "Toyota" in _css(drv, card)[0].text and f"Members ({len(made['merge']['member_ids'])})" in \
        _css(drv, card)[0].text
    _shot(drv, "merges-desktop", DESKTOP)
    _css(drv, card + " button")[0].click()
    _wait(drv, lambda d: "active again" in _css(d, card)[0].text, "the undo's result")
    with srv.client(keys["ana"]) as c:
        assert c.get("/v1/merges", params={"user_id": "ana"}).json()["merges"] == []

    _click(drv, ".tabs button", "Forget")
    drv.find_element("id", "what").send_keys("forget my dog\n")
    _wait(drv, lambda d: "Would remove 1 memory" in d.find_element("id", "forget-preview").text, "the dry run")
    _click(drv, "#forget-preview button", "Purge these")
    # The dialog opens on the click's event; under load its text can lag the click by a frame.
    _wait(drv, lambda d: d.find_element("id", "forget-confirm").text, "the purge confirmation")
    confirm = drv.find_element("id", "forget-confirm")
    assert "cannot be undone" in confirm.text and drv.switch_to.active_element == confirm
    with srv.client(keys["ana"]) as c:  # the preview removed nothing
        assert c.get(f"/v1/memories/{made['dog']}", params={"user_id": "ana"}).json()["memory"]["is_active"]
    _click(drv, "#forget-confirm button", "Cancel")

    drv.set_window_size(*PHONE)
    _click(drv, ".tabs button", "Memories")
    _wait(drv, lambda d: len(_css(d, "#memories li")) >= 4, "the memories at phone width")
    assert _fits_width(drv), "the page scrolls sideways at phone width"
    drv.set_window_size(*DESKTOP)
    _shot(drv, "memories-phone", PHONE)


def test_a_search_result_shows_what_was_folded_into_it(served, browser):
    srv, keys, made = served
    drv = browser
    _sign_in(drv, srv.url, keys["ana"])
    _click(drv, "#scopes button", "user ana")
    _wait(drv, lambda d: len(_css(d, "#memories li")) >= 4, "ana's memories")
    assert "flowers" not in drv.find_element("id", "memories").text  # the list shows memories as stored
    drv.find_element("id", "q").send_keys("the farmers market\n")
    _wait(drv, lambda d: "result(s)" in d.find_element("id", "mem-caption").text, "search results")
    card = _css(drv, f"#memories li[data-id='{made['market']}']")[0]
    (fold,) = _css(drv, f"#memories li[data-id='{made['market']}'] .folded li")
    assert fold.get_attribute("data-rejection") == made["told"]
    assert fold.text.startswith("told again 2024-06-20") and fold.text.endswith("vegetables and flowers.")
    assert card.text.index("fresh vegetables.") < card.text.index("told again")
    drv.set_window_size(*PHONE)
    assert _fits_width(drv), "a result with a folded text scrolls sideways at phone width"
    drv.set_window_size(*DESKTOP)


def test_forget_names_a_folded_text_before_and_after_it_takes_it_out_of_search(served, browser):
    """A request that names only a folded text: the preview says no memory and lists the fold, the
    purge's warning lists the memory a purge would erase for it, and a delete takes the fold out of
    search (the memory stays)."""
    srv, keys, made = served
    drv = browser
    _sign_in(drv, srv.url, keys["ana"])
    _click(drv, "#scopes button", "user ana")
    _click(drv, ".tabs button", "Forget")
    drv.find_element("id", "what").clear()
    drv.find_element("id", "what").send_keys("the flowers\n")
    _wait(drv, lambda d: "Would take 1 folded text out of search" in d.find_element("id", "forget-preview").text,
          "the dry run's fold")
    preview = drv.find_element("id", "forget-preview")
    assert "Would remove 0 memories." in preview.text
    (fold,) = _css(drv, "#forget-preview ul.folds li")
    assert fold.get_attribute("data-rejection") == made["told"] and made["market"] in fold.text
    _click(drv, "#forget-preview button", "Purge these")
    _wait(drv, lambda d: "cannot be undone" in d.find_element("id", "forget-confirm").text, "the purge's warning")
    confirm = drv.find_element("id", "forget-confirm")
    assert "Purge erases the text and embedding of 1 memory" in confirm.text and made["market"] in confirm.text
    _click(drv, "#forget-confirm button", "Cancel")
    _click(drv, "#forget-preview button", "Delete these")
    _wait(drv, lambda d: "take 1 folded text out of search" in d.find_element("id", "forget-confirm").text,
          "the delete's question")
    _click(drv, "#forget-confirm button", "Yes, delete")
    _wait(drv, lambda d: "Deleted 0 memories and took 1 folded text out of search." in
          d.find_element("id", "forget-preview").text, "the delete's result")
    with srv.client(keys["ana"]) as c:
        assert c.get(f"/v1/memories/{made['market']}", params={"user_id": "ana"}).json()["memory"]["is_active"]
        hits = c.post("/v1/search", json={"query": "the farmers market", "user_id": "ana", "limit": 3}).json()
        assert [h["folded"] for h in hits["results"] if h["id"] == made["market"]] == [[]]


def test_the_api_and_the_page_refuse_without_a_key_and_with_a_wrong_key(served, browser):
    srv, keys, _ = served
    with httpx.Client(base_url=srv.url) as c:
        assert c.get("/ui").status_code == 200  # the page itself is public; the API is not
        assert c.get("/v1/scopes").status_code == 401
        assert c.get("/v1/scopes", headers={"Authorization": "Bearer msk_wrong"}).status_code == 401
        every = c.get("/v1/scopes", headers={"Authorization": f"Bearer {keys['ops']}"}).json()
        assert {s["scope"]["user_id"] for s in every["scopes"]} == {"ana", "bob"} and every["key"]["admin"]
        page = c.get("/ui")
        assert 'content=""' in page.text and "script-src 'self'" in page.headers["content-security-policy"]
    drv = browser
    drv.get(srv.url + "/ui")
    drv.execute_script("sessionStorage.clear()")
    drv.refresh()
    _wait(drv, lambda d: "refused access (401)" in _status(d), "the refusal without a key")
    assert "no API key" in _status(drv) and _css(drv, "#scopes li") == []
    assert drv.switch_to.active_element.get_attribute("id") == "key"
    _shot(drv, "no-key-desktop", DESKTOP)
    drv.find_element("id", "key").send_keys("msk_not_a_key\n")
    _wait(drv, lambda d: "not valid here" in _status(d), "the refusal of a wrong key")
    assert _css(drv, "#scopes li") == [] and drv.find_element("id", "scope-section").get_attribute("hidden")


def test_memsieve_ui_serves_the_page_on_loopback_without_a_key(served, browser, tmp_path):
    srv, _, _ = served
    db = Path(re.search(r"--db (\S+)", " ".join(srv.args)).group(1))
    out = tmp_path / "ui.out"
    with open(out, "wb") as so, open(tmp_path / "ui.err", "wb") as se:
        proc = subprocess.Popen([sys.executable, "-m", "memsieve.cli", "ui", "--db", str(db), "--port", "0"],
                                stdout=so, stderr=se, stdin=subprocess.DEVNULL, env=env())
    try:
        deadline = time.monotonic() + 120
        url = ""
        while time.monotonic() < deadline and not url:
            assert proc.poll() is None, (tmp_path / "ui.err").read_text()
            url = out.read_text().strip()
            time.sleep(0.2)
        assert url.startswith("http://127.0.0.1:") and url.endswith("/ui"), url
        base = url[: -len("/ui")]
        while time.monotonic() < deadline:
            try:
                if httpx.get(base + "/readyz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        assert httpx.get(base + "/v1/scopes").status_code == 401  # the API still wants the key
        assert httpx.get(url, headers={"Host": "evil.example"}).status_code == 403  # no rebound hostname
        drv = browser
        drv.get(url)
        drv.execute_script("sessionStorage.clear()")
        _wait(drv, lambda d: "user bob" in d.find_element("id", "scopes").text, "every scope, without a key")
        assert "user ana" in drv.find_element("id", "scopes").text
        assert not drv.find_element("id", "key-form").is_displayed()
        assert "memsieve ui" in drv.find_element("id", "who").text
        _shot(drv, "ui-command-desktop", DESKTOP)
    finally:
        proc.terminate()
        proc.wait(timeout=60)
