"""Crowd links against one client posing as a crowd (issue 24): the rate limit counts every request
(logged in or not, requests arriving together included); an answer needs the worker's hold and
key, a task takes no more answers than its judges (plus bounded late answers), a reference no more
writings than asked; a browser session holds a bounded number of slots; malformed ids are
refused, never a server error. The races run on real PostgreSQL, with threads released together.
Sharing slots between addresses and workers behind one address: test_crowd_sharing.py."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from annotation.corpus.models import ReferenceSummary
from annotation.lightweight import work
from annotation.lightweight.models import CrowdLink, LiteAssignment, LiteTask, LiteWriting

from tests.lightweight.test_crowd_submissions import at_once, own, shown_task
from tests.lightweight.test_reservations import answer, expire, judging_link

FLOOD = 40


@pytest.mark.postgres
@pytest.mark.redis
def test_requests_arriving_together_are_counted_one_by_one(transactional_db, settings):
    """The throttle read, appended to and wrote back its history: requests arriving together all
    read the same history and were all let through. Logged in or not, alike."""
    settings.CROWD_RATE = "10/min"
    link = judging_link(peers=1, judges=1)
    user = get_user_model().objects.create_user("flooder")

    def crowd_request(i, address, logged_in):
        api, page = APIClient(REMOTE_ADDR=address), Client(REMOTE_ADDR=address)
        if logged_in:  # the throttle keyed no logged-in user (issue 24: 700 page loads, all 200)
            api.force_authenticate(user)
            page.force_login(user)
        return (
            api.get(f"/api/crowd/{link.token}/")
            if i % 2
            # 400 (no worker id) once let through
            else page.get(f"/lightweight/crowd/{link.token}/")
        ).status_code

    for round_ in range(4):  # a fresh counter each round (another address); pages and API share it
        address, logged_in = f"127.0.{round_}.9", round_ >= 2
        statuses = at_once(
            [
                lambda i=i, address=address, logged_in=logged_in: crowd_request(i, address, logged_in)
                for i in range(FLOOD)
            ]
        )
        assert statuses.count(429) == FLOOD - 10, (round_, logged_in, statuses)


@pytest.mark.django_db
def test_a_logged_in_user_is_limited_like_anyone(settings):
    settings.CROWD_RATE = "3/min"
    link = judging_link(peers=1, judges=1)
    user = get_user_model().objects.create_user("someone")
    page, api = Client(), APIClient()
    page.force_login(user)
    api.force_authenticate(user)
    statuses = [page.get(f"/lightweight/crowd/{link.token}/").status_code for _ in range(3)]
    statuses.append(api.get(f"/api/crowd/{link.token}/", {"worker": "w1"}).status_code)
    assert statuses == [200, 200, 200, 429]
    assert Client(REMOTE_ADDR="127.0.0.2").get(f"/lightweight/crowd/{link.token}/").status_code == 200  # another client


@pytest.mark.django_db
def test_a_nul_byte_in_a_worker_id_or_a_link_is_refused_not_a_server_error():
    link = judging_link(peers=1, judges=1)
    assert Client().get("/lightweight/crowd/a%00b/").status_code == 404
    assert APIClient().get("/api/crowd/a%00b/", {"worker": "w1"}).status_code == 404
    assert APIClient().get(f"/api/crowd/{link.token}/", {"worker": "a\x00b"}).status_code == 400
    posted = APIClient().post(
        f"/api/crowd/{link.token}/",
        {"worker": "a\x00b", "task": link.pyramid.tasks.first().pk, "answers": {}},
        format="json",
    )
    assert posted.status_code == 400
    page = Client()
    refused = page.post(f"/lightweight/crowd/{link.token}/", {"worker": "a\x00b"})
    assert refused.status_code == 200 and "Null characters are not allowed" in refused.content.decode()
    assert page.get(f"/lightweight/crowd/{link.token}/", {"worker": "a\x00b", "change": ""}).status_code == 200


# --- ballot stuffing: an answer only against a hold, with the worker's key -------------------------


def api_answer(link, worker, address, task=None, key=""):
    """GET a task (unless ``task``) and POST an answer for it through the API from ``address``."""
    client, url = APIClient(REMOTE_ADDR=address), f"/api/crowd/{link.token}/"
    if task is None:
        shown = client.get(url, {"worker": worker, "key": key})
        if shown.status_code != 200 or "task" not in shown.data:
            return shown
        task, key = LiteTask.objects.get(pk=shown.data["task"]), shown.data["key"]
    return client.post(
        url,
        {"worker": worker, "key": key, "task": task.pk, "answers": {pk: "present" for pk in task.statement_ids}},
        format="json",
    )


@pytest.mark.django_db
def test_an_answer_is_taken_only_against_the_workers_hold():
    link = judging_link(peers=2, judges=3)
    task = link.pyramid.tasks.filter(batch=1).first()
    # new worker ids, no hold: nothing stored, on the API and on the page
    assert [api_answer(link, f"stuffer{i}", "127.0.0.66", task).status_code for i in range(5)] == [400] * 5
    page, url = Client(REMOTE_ADDR="127.0.0.67"), f"/lightweight/crowd/{link.token}/"
    page.post(url, {"worker": "stuffer-page"})
    refused = page.post(url, {"task": task.pk, **{f"a{pk}": "present" for pk in task.statement_ids}})
    assert refused.status_code == 400 and work.NOT_HELD in refused.content.decode()
    assert not LiteAssignment.objects.exists()


@pytest.mark.django_db
def test_late_answers_are_bounded(settings):
    """An answer whose hold expired is stored while the task has fewer than judges + LATE answers
    and holds, and only within the hold's duration again."""
    settings.LIGHTWEIGHT_LATE_ANSWERS = 1
    link = judging_link(peers=1, judges=1)
    task = work.next_task(link, "j1", own("j1"))
    expire(worker_id="j1")
    work.next_task(link, "j2", own("j2"))
    expire(worker_id="j2")
    assert work.next_task(link, "j3", own("j3")).pk == task.pk
    answer(link, task, "j3")  # on time
    answer(link, task, "j1")  # late: the one answer over the judges allowed
    with pytest.raises(work.WorkError, match="not held for you"):
        answer(link, task, "j2")  # late too: one too many
    assert LiteAssignment.objects.filter(task=task).count() == 1 + settings.LIGHTWEIGHT_LATE_ANSWERS


@pytest.mark.django_db
def test_an_answer_later_than_the_holds_duration_again_is_refused(settings):
    link = judging_link(peers=1, judges=2)
    task = work.next_task(link, "k1", own("k1"))
    expire(settings.LIGHTWEIGHT_RESERVATION_SECONDS + 1, worker_id="k1")
    with pytest.raises(work.WorkError, match="not held for you"):
        answer(link, task, "k1")  # far too late, although the task has room
    assert not task.assignments.exists()


@pytest.mark.postgres
def test_one_address_inventing_worker_ids_never_overfills_a_task_nor_turns_anyone_away_from_a_free_slot(
    transactional_db, settings
):
    """The flood of issue 24, at once: a script on one address GETs and answers tasks under ever new
    worker ids while genuine workers on other addresses judge, 32 requests for 18 slots. No task
    takes more than its judges; every slot is answered; whoever is not served is told the work is
    done, never to come back while a slot is free. (Who wins the answered slots is the threads'
    scheduling: the flood's holds that can be taken over are, below.)"""
    settings.CROWD_RATE = "100000/min"
    link = judging_link(peers=6, judges=3)
    stuffers = [lambda i=i: api_answer(link, f"fake{i}", "127.0.0.66") for i in range(24)]
    genuine = [lambda i=i: api_answer(link, f"g{i}", f"127.0.1.{i}") for i in range(8)]
    responses = at_once(stuffers + genuine)
    by_task = answers_by_task(link)
    assert sorted(len(clients) for clients in by_task.values()) == [3] * 6, by_task
    statuses = [r.status_code for r in responses]
    assert statuses.count(201) == 18
    assert sum(clients.count("127.0.0.66") for clients in by_task.values()) == statuses[:24].count(201)
    assert all(r.status_code == 201 or r.data.get("done") is True for r in responses[24:]), responses[24:]


@pytest.mark.postgres
def test_genuine_workers_take_over_the_slots_a_flood_of_invented_ids_holds(transactional_db, settings):
    """Invented ids on one address hold every slot of a batch (and ask for more); genuine workers
    from other addresses arriving at once are all served, by taking over the flood's newest holds;
    the flood's answers after that never overfill a task past its judges and the late answers."""
    settings.CROWD_RATE = "100000/min"
    link = judging_link(peers=6, judges=3)
    url = f"/api/crowd/{link.token}/"
    shown = at_once(
        [lambda i=i: APIClient(REMOTE_ADDR="127.0.0.66").get(url, {"worker": f"fake{i}"}) for i in range(24)]
    )
    assert sum("task" in r.data for r in shown) == 18  # every slot of the batch; the six others were told to come back
    genuine = at_once([lambda i=i: api_answer(link, f"g{i}", f"127.0.1.{i}").status_code for i in range(8)])
    assert genuine == [201] * 8
    fakes = [(f"fake{i}", r) for i, r in enumerate(shown) if "task" in r.data]
    late = at_once(
        [
            lambda w=w, r=r: (
                api_answer(link, w, "127.0.0.66", LiteTask.objects.get(pk=r.data["task"]), r.data["key"]).status_code
            )
            for w, r in fakes
        ]
    )
    assert late.count(201) >= 18 - 8  # the flood's holds not taken over are answered on time
    by_task = answers_by_task(link)
    assert all(len(clients) <= 3 + settings.LIGHTWEIGHT_LATE_ANSWERS for clients in by_task.values()), by_task
    assert sum(clients.count("127.0.0.66") for clients in by_task.values()) == late.count(201)
    assert sum(len(clients) for clients in by_task.values()) == 8 + late.count(201)


def answers_by_task(link) -> dict[int, list]:
    out = {}
    for task, client in LiteAssignment.objects.filter(task__pyramid=link.pyramid).values_list("task_id", "client"):
        out.setdefault(task, []).append(client)
    return out


# --- holds: a session's cap ------------------------------------------------------------------------


@pytest.mark.postgres
def test_ten_genuine_workers_behind_one_address_are_all_served(transactional_db, settings):
    settings.CROWD_RATE = "100000/min"
    link = judging_link(peers=20, judges=3)
    url = f"/lightweight/crowd/{link.token}/"

    def lab_worker(i):
        page = Client(REMOTE_ADDR="127.0.0.50")
        page.post(url, {"worker": f"lab{i}"})
        return page, shown_task(page, url)

    served = at_once([lambda i=i: lab_worker(i) for i in range(10)])
    for page, task in served:
        assert (
            page.post(url, {"task": task.pk, **{f"a{pk}": "present" for pk in task.statement_ids}}).status_code == 200
        )
    by_task = answers_by_task(link)
    assert sum(map(len, by_task.values())) == 10 and all(len(clients) <= 3 for clients in by_task.values())


@pytest.mark.django_db
def test_ten_workers_behind_one_address_are_served_after_others_filled_the_first_tasks():
    """The share of free slots was counted over the tasks the client could still take, so each of
    its holds shrank its own share: once ten workers elsewhere had filled the first tasks, a lab's
    tenth worker was refused (8 of 20 x 3 slots)."""
    link = judging_link(peers=20, judges=3)
    for i in range(10):
        assert work.next_task(link, f"g{i}", own(f"g{i}")) is not None
    lab = work.CrowdClient("127.0.0.50")
    held = [work.next_task(link, f"lab{i}", lab) for i in range(10)]
    assert None not in held


@pytest.mark.django_db
def test_one_session_holds_at_most_its_cap(settings):
    link = judging_link(peers=20, judges=3)
    url = f"/lightweight/crowd/{link.token}/"
    page = Client(REMOTE_ADDR="127.0.0.70")
    statuses = []
    for i in range(settings.CROWD_HOLDS_PER_SESSION + 1):  # one browser, switching worker ids
        page.post(url + "?change", {"worker": f"s{i}"})
        statuses.append(page.get(url).status_code)
    assert statuses == [200] * settings.CROWD_HOLDS_PER_SESSION + [429]


# --- writings -------------------------------------------------------------------------------------


@pytest.mark.postgres
def test_writings_never_exceed_the_writers_asked_for(transactional_db, settings):
    """40 writings of one reference were taken where 4 were asked: writers sending at once (other
    addresses, or one) fill it to writers_per_reference and no more."""
    settings.CROWD_RATE = "100000/min"
    link = judging_link(peers=1, judges=1)
    run = link.pyramid
    run.writers_per_reference = 2  # judging_link's run has 1 writing per reference already
    run.save()
    writing = CrowdLink.objects.create(pyramid=run, kind=CrowdLink.Kind.WRITING)
    reference = ReferenceSummary.objects.get(topic__dataset=run.dataset, external_id="A")

    def write(worker, address):
        key = own(worker, run).key
        return (
            APIClient(REMOTE_ADDR=address)
            .post(
                f"/api/crowd/{writing.token}/",
                {
                    "worker": worker,
                    "key": key,
                    "reference": reference.pk,
                    "statements": ["The storm came", "It was a Monday"],
                },
                format="json",
            )
            .status_code
        )

    statuses = at_once(
        [lambda i=i: write(f"x{i}", f"127.0.4.{i}") for i in range(8)]
        + [lambda i=i: write(f"y{i}", "127.0.0.66") for i in range(8)]
    )
    assert statuses.count(201) == 1 and LiteWriting.objects.filter(pyramid=run, reference=reference).count() == 2
