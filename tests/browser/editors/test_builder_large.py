"""A pyramid of 1,000 SCUs over 8 references in the builder: the SCU list holds only the rows near
its viewport (a windowed list) with the scroll height of all of them, and a person still finds an
SCU far down the list, selects it, merges it by key and by drag, and walks the list with the keys."""

import pytest

from annotation.corpus.models import Assignment, Dataset, ReferenceSummary, Topic
from annotation.pyramids.models import SCU, Contributor, ContributorPart, Pyramid

from tests.browser.editors.browser import login, wait_saved, world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

N_SCUS, N_REFERENCES = 1000, 8
WORDS = "dam flood valley river engineer concrete storm rain night town mayor report council water bridge road".split()


def large_pyramid(user):
    """SCU i ("Unit 0001" ...) has 1-3 contributors, one 3-word phrase in each of references i, i+1, i+2 (mod 8)."""
    topic = Topic.objects.create(
        dataset=Dataset.objects.create(name="Large"), external_id="L1000", title="A large pyramid"
    )
    texts = [
        " ".join(f"{WORDS[(i + r) % 16]} {WORDS[(3 * i + r) % 16]} w{i}r{r}." for i in range(N_SCUS))
        for r in range(N_REFERENCES)
    ]
    references = [
        ReferenceSummary.objects.create(topic=topic, external_id=chr(ord("A") + r), text=t) for r, t in enumerate(texts)
    ]
    pyramid = Pyramid.objects.create(topic=topic, creator=user, status=Pyramid.Status.IN_PROGRESS, last_uid=N_SCUS)
    pyramid.references.set(references)
    Assignment.objects.create(topic=topic, annotator=user, task=Assignment.Task.BUILD_PYRAMID)
    scus = SCU.objects.bulk_create(SCU(pyramid=pyramid, uid=i + 1, label=f"Unit {i + 1:04d}") for i in range(N_SCUS))
    plan = [(scu, (i + k) % N_REFERENCES) for i, scu in enumerate(scus) for k in range(1 + i % 3)]
    contributors = Contributor.objects.bulk_create(Contributor(scu=scu, reference=references[r]) for scu, r in plan)
    parts = []
    for contributor, (scu, r) in zip(contributors, plan, strict=True):
        text, phrase = texts[r], f"w{scu.uid - 1}r{r}."
        end = text.index(phrase) + len(phrase) - 1
        parts.append(
            ContributorPart(
                contributor=contributor,
                reference=references[r],
                start=text.rindex(" ", 0, text.index(phrase) - 1) + 1,
                end=end,
            )
        )
    ContributorPart.objects.bulk_create(parts)
    return pyramid


def find(page, text):
    """Find by typing into the search field, as a person does (/ focuses it)."""
    page.keyboard.press("/")
    page.keyboard.press("Control+a")
    page.keyboard.press("Backspace")
    if text:
        page.keyboard.type(text)


def placed(page):
    return page.evaluate(
        "() => [...document.querySelectorAll('.scu-list .scu')].map((s) => s.querySelector('.label').textContent)"
    )


def test_find_select_and_merge_far_down_a_1000_scu_pyramid(chromium, live_server, artifacts):
    user, _ = world()
    pyramid = large_pyramid(user)
    context = chromium.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.on("pageerror", lambda error: pytest.fail(f"JavaScript error: {error}"))
    login(page, live_server.url, user.username)
    page.goto(f"{live_server.url}/pyramids/{pyramid.pk}/build/")
    page.wait_for_selector(".editor.ready")
    wait_saved(page)
    assert page.text_content(".counts") == "1000 SCUs"
    assert len(placed(page)) < 100, "only the rows near the viewport are in the DOM"
    assert page.evaluate("() => document.querySelector('.scu-list').scrollHeight") > 1000 * 25, (
        "the scroll height stands for every SCU"
    )

    find(page, "Unit 0997")  # far down the list: weight 1, reference E
    page.wait_for_function("() => document.querySelector('.counts').textContent === '1 of 1000 SCUs'")
    page.click(".scu:has-text('Unit 0997') .label")
    page.keyboard.press("x")  # checked for merging
    find(page, "Unit 0996")  # weight 3: references D, E, F
    page.click(".scu:has-text('Unit 0996') .label")
    page.keyboard.press("m")  # refused at once: two contributors from E
    assert "two contributors from one reference" in page.text_content(".banner")
    find(page, "Unit 0995")  # weight 2: references C, D
    page.click(".scu:has-text('Unit 0995') .label")
    page.keyboard.press("m")
    wait_saved(page)
    target = SCU.objects.get(pyramid=pyramid, uid=995)
    assert not SCU.objects.filter(pyramid=pyramid, uid=997).exists() and target.contributors.count() == 3
    assert page.text_content(f'.scu[data-id="{target.pk}"] .weight') == "3"

    find(page, "")  # the whole list again, the merged SCU kept in view
    page.wait_for_function("() => document.querySelector('.counts').textContent === '999 SCUs'")
    page.wait_for_function(f"""() => {{ const item = document.querySelector('.scu[data-id="{target.pk}"]'),
            list = document.querySelector('.scu-list');
        if (!item) return false; const a = item.getBoundingClientRect(), b = list.getBoundingClientRect();
          return a.top >= b.top && a.bottom <= b.bottom; }}""")
    page.click(f'.scu[data-id="{target.pk}"] .label')
    for _ in range(3):  # J walks on, into the next weight
        page.keyboard.press("j")
    assert page.text_content(".scu.selected .label") == "Unit 0002", (
        "weight 3 ends with 0995, 0996, 0999; weight 2 starts with 0002"
    )

    page.hover(".scu-list")  # scroll to the very end with the wheel
    for _ in range(100):
        page.mouse.wheel(0, 4000)
        if "Unit 1000" in placed(page):
            break
    assert "Unit 1000" in placed(page) and len(placed(page)) < 100
    last, before = SCU.objects.get(pyramid=pyramid, uid=1000), SCU.objects.get(pyramid=pyramid, uid=994)
    page.drag_and_drop(f'.scu[data-id="{last.pk}"] .label', f'.scu[data-id="{before.pk}"] .label')  # merge by drag
    wait_saved(page)
    assert not SCU.objects.filter(pyramid=pyramid, uid=1000).exists() and before.contributors.count() == 2
    page.screenshot(path=str(artifacts / "builder-large-after-merges.png"))

    page.keyboard.press(">")  # step through the merged SCU's contributors
    assert page.text_content(".step-text") == "contributor 1 of 2"
    page.keyboard.press(">")
    assert page.text_content(".step-text") == "contributor 2 of 2"
    assert page.text_content(".ref-text .seg.hl-contrib") == "council w999r7"
    page.keyboard.press("o")  # fold the selected SCU, then all of them
    assert page.locator(".scu.selected .contributors").count() == 0
    page.click("button.fold-all")
    assert page.locator(".scu-list .contributors").count() == 0 and 0 < len(placed(page)) < 150
    page.select_option(".sort", "uid")  # another order: the selected SCU stays in the list
    page.keyboard.press("j")
    assert page.text_content(".scu.selected .label") == "Unit 0995"
    page.screenshot(path=str(artifacts / "builder-large-folded-by-uid.png"))
    context.close()
