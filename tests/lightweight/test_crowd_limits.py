"""Crowd links against one client posing as a crowd (issue 24): the rate limit counts every request
(logged in or not, requests arriving together included); an answer needs the worker's hold from
its client, a task takes one answer per client and no more than its judges (plus bounded late
answers), a reference no more writings than asked; a client holds a bounded number of slots (per
address, per session, a share of the free ones); malformed ids are refused, never a server error.
The races run on real PostgreSQL, with threads released together."""
import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.models import CrowdLink, LiteAssignment, LiteReservation, LiteTask, LiteWriting, ReferenceSummary
from annotation.lightweight import work as lightweight_work

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
        if logged_in:   # the throttle keyed no logged-in user (issue 24: 700 page loads, all 200)
            api.force_authenticate(user)
            page.force_login(user)
        return (api.get(f"/api/crowd/{link.token}/") if i % 2 else   # 400 (no worker id) once let through
                page.get(f"/lightweight/crowd/{link.token}/")).status_code

    for round_ in range(4):   # a fresh counter each round (another address); pages and API share it
        address, logged_in = f"127.0.{round_}.9", round_ >= 2
        statuses = at_once([lambda i=i: crowd_request(i, address, logged_in) for i in range(FLOOD)])
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
    assert Client(REMOTE_ADDR="127.0.0.2").get(f"/lightweight/crowd/{link.token}/").status_code == 200   # another client


@pytest.mark.django_db
def test_a_nul_byte_in_a_worker_id_or_a_link_is_refused_not_a_server_error():
    link = judging_link(peers=1, judges=1)
    assert Client().get("/lightweight/crowd/a%00b/").status_code == 404
    assert APIClient().get("/api/crowd/a%00b/", {"worker": "w1"}).status_code == 404
    assert APIClient().get(f"/api/crowd/{link.token}/", {"worker": "a\x00b"}).status_code == 400
    posted = APIClient().post(f"/api/crowd/{link.token}/", {"worker": "a\x00b", "task": link.pyramid.tasks.first().pk,
                                                            "answers": {}}, format="json")
    assert posted.status_code == 400
    page = Client()
    refused = page.post(f"/lightweight/crowd/{link.token}/", {"worker": "a\x00b"})
    assert refused.status_code == 200 and "Null characters are not allowed" in refused.content.decode()
    assert page.get(f"/lightweight/crowd/{link.token}/", {"worker": "a\x00b", "change": ""}).status_code == 200


# --- ballot stuffing: an answer only against a hold, one per client and task ---------------------

def api_answer(link, worker, address, task=None):
    """GET a task (unless ``task``) and POST an answer for it through the API from ``address``."""
    client, url = APIClient(REMOTE_ADDR=address), f"/api/crowd/{link.token}/"
    if task is None:
        shown = client.get(url, {"worker": worker})
        if shown.status_code != 200 or "task" not in shown.data:
            return shown
        task = LiteTask.objects.get(pk=shown.data["task"])
    return client.post(url, {"worker": worker, "task": task.pk, "answers": {pk: "present" for pk in task.statement_ids}}, format="json")


def answers_by_task(link) -> dict[int, list]:
    out = {}
    for task, client in LiteAssignment.objects.filter(task__pyramid=link.pyramid).values_list("task_id", "client"):
        out.setdefault(task, []).append(client)
    return out


@pytest.mark.django_db
def test_an_answer_is_taken_only_against_the_workers_hold_from_its_client():
    link = judging_link(peers=2, judges=3)
    task = link.pyramid.tasks.filter(batch=1).first()
    # new worker ids, no hold: nothing stored, on the API and on the page
    assert [api_answer(link, f"stuffer{i}", "127.0.0.66", task).status_code for i in range(5)] == [400] * 5
    page, url = Client(REMOTE_ADDR="127.0.0.67"), f"/lightweight/crowd/{link.token}/"
    page.post(url, {"worker": "stuffer-page"})
    refused = page.post(url, {"task": task.pk, **{f"a{pk}": "present" for pk in task.statement_ids}})
    assert refused.status_code == 400 and lightweight_work.NOT_HELD in refused.content.decode()
    assert not LiteAssignment.objects.exists()
    # a hold of j1 answered from another client (someone who knows j1's id): refused, j1's own answer taken
    held = APIClient(REMOTE_ADDR="127.0.0.5").get(f"/api/crowd/{link.token}/", {"worker": "j1"}).data["task"]
    held = LiteTask.objects.get(pk=held)
    assert api_answer(link, "j1", "127.0.0.6", held).status_code == 400
    done = api_answer(link, "j1", "127.0.0.5", held)
    assert done.status_code == 201
    again = api_answer(link, "j1", "127.0.0.6", held)   # nor does the stored answer's code go to another client
    assert again.status_code == 400 and "completion_code" not in again.data
    assert answers_by_task(link) == {held.pk: ["127.0.0.5"]}


@pytest.mark.django_db
def test_late_answers_are_bounded(settings):
    """An answer whose hold expired is stored while the task has fewer than judges + LATE answers
    and holds, and only within the hold's duration again."""
    settings.LIGHTWEIGHT_LATE_ANSWERS = 1
    link = judging_link(peers=1, judges=1)
    task = lightweight_work.next_task(link, "j1", own("j1"))
    expire(worker_id="j1")
    lightweight_work.next_task(link, "j2", own("j2"))
    expire(worker_id="j2")
    assert lightweight_work.next_task(link, "j3", own("j3")).pk == task.pk
    answer(link, task, "j3")   # on time
    answer(link, task, "j1")   # late: the one answer over the judges allowed
    with pytest.raises(lightweight_work.WorkError, match="no longer held"):
        answer(link, task, "j2")   # late too: one too many
    assert LiteAssignment.objects.filter(task=task).count() == 1 + settings.LIGHTWEIGHT_LATE_ANSWERS


@pytest.mark.django_db
def test_an_answer_later_than_the_holds_duration_again_is_refused(settings):
    link = judging_link(peers=1, judges=2)
    task = lightweight_work.next_task(link, "k1", own("k1"))
    expire(settings.LIGHTWEIGHT_RESERVATION_SECONDS + 1, worker_id="k1")
    with pytest.raises(lightweight_work.WorkError, match="no longer held"):
        answer(link, task, "k1")   # far too late, although the task has room
    assert not task.assignments.exists()


@pytest.mark.postgres
def test_one_address_inventing_worker_ids_gets_one_answer_per_task_while_others_are_served(transactional_db, settings):
    """The flood of issue 24, at once: a script on one address GETs and answers tasks under ever new
    worker ids while genuine workers on other addresses judge. No task takes more than its judges,
    nor more than one answer of the script's address; every genuine worker is served."""
    settings.CROWD_RATE = "100000/min"
    link = judging_link(peers=6, judges=3)
    stuffers = [lambda i=i: api_answer(link, f"fake{i}", "127.0.0.66").status_code for i in range(24)]
    genuine = [lambda i=i: api_answer(link, f"g{i}", f"127.0.1.{i}").status_code for i in range(8)]
    statuses = at_once(stuffers + genuine)
    assert statuses[24:] == [201] * 8
    by_task = answers_by_task(link)
    assert all(len(clients) <= 3 and clients.count("127.0.0.66") <= 1 for clients in by_task.values()), by_task
    assert sum(clients.count("127.0.0.66") for clients in by_task.values()) == statuses[:24].count(201) <= 6



@pytest.mark.postgres
def test_one_session_hopping_addresses_gives_a_task_one_answer_while_others_are_served(transactional_db, settings):
    """A script keeping its session cookie while it changes address (a pool of proxies) and worker
    id is still one client: each task takes one answer of that session at most, asked all at once,
    and workers on other addresses are all served."""
    settings.CROWD_RATE = "100000/min"
    link = judging_link(peers=2, judges=3)   # batch 1: 2 tasks of 3 slots
    url = f"/api/crowd/{link.token}/"

    def hop(i):
        client = APIClient(REMOTE_ADDR=f"127.0.5.{i}")
        client.cookies["sessionid"] = "one-script-session-key"
        shown = client.get(url, {"worker": f"hop{i}"})
        if "task" not in shown.data:
            return shown.status_code
        task = LiteTask.objects.get(pk=shown.data["task"])
        return client.post(url, {"worker": f"hop{i}", "task": task.pk, "answers": {pk: "present" for pk in task.statement_ids}},
                           format="json").status_code

    statuses = at_once([lambda i=i: hop(i) for i in range(12)] +
                       [lambda i=i: api_answer(link, f"g{i}", f"127.0.6.{i}").status_code for i in range(3)])
    assert statuses[12:] == [201] * 3
    sessions = {}
    for task, session in LiteAssignment.objects.filter(task__pyramid=link.pyramid).exclude(session="").values_list("task_id", "session"):
        sessions.setdefault(task, []).append(session)
    script = {task: found for task, found in sessions.items() if len(found) > 1}
    assert script == {}, script   # the genuine workers sent no cookie: only the script has a session
    assert 1 <= statuses[:12].count(201) == sum(map(len, sessions.values())) <= 2

# --- reservation exhaustion: holds capped per client ---------------------------------------------

@pytest.mark.postgres
def test_one_address_rotating_ids_and_sessions_holds_at_most_its_cap_and_others_are_served(transactional_db, settings):
    """GET ?worker=fake1..fakeN from one address, through the API and the page with a fresh cookie
    each time, all at once: the address holds CROWD_HOLDS_PER_ADDRESS slots, the rest are refused
    (429); workers on other loopback addresses all get tasks."""
    settings.CROWD_RATE = "100000/min"
    link = judging_link(peers=20, judges=3)
    url = f"/lightweight/crowd/{link.token}/"

    def fake(i):
        if i % 2:
            return APIClient(REMOTE_ADDR="127.0.0.66").get(f"/api/crowd/{link.token}/", {"worker": f"fake{i}"}).status_code
        page = Client(REMOTE_ADDR="127.0.0.66")   # a fresh session each time
        page.post(url, {"worker": f"fake{i}"})
        return page.get(url).status_code

    statuses = at_once([lambda i=i: fake(i) for i in range(30)] +
                       [lambda i=i: APIClient(REMOTE_ADDR=f"127.0.2.{i}").get(f"/api/crowd/{link.token}/", {"worker": f"g{i}"}).status_code
                        for i in range(10)])
    assert statuses[30:] == [200] * 10
    assert statuses[:30].count(200) == settings.CROWD_HOLDS_PER_ADDRESS and statuses[:30].count(429) == 30 - settings.CROWD_HOLDS_PER_ADDRESS
    live = LiteReservation.objects.filter(expires_at__gt=timezone.now())
    assert live.filter(client="127.0.0.66").count() == settings.CROWD_HOLDS_PER_ADDRESS
    # renewing the same ids keeps the address at its cap, and others are still served
    for i in range(30):
        APIClient(REMOTE_ADDR="127.0.0.66").get(f"/api/crowd/{link.token}/", {"worker": f"fake{i}"})
    assert live.filter(client="127.0.0.66").count() == settings.CROWD_HOLDS_PER_ADDRESS
    assert APIClient(REMOTE_ADDR="127.0.3.1").get(f"/api/crowd/{link.token}/", {"worker": "late"}).data["kind"] == "judging"


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
    assert len({task.pk for _, task in served}) == 10   # one address: spread over tasks, never two on one
    for page, task in served:
        assert page.post(url, {"task": task.pk, **{f"a{pk}": "present" for pk in task.statement_ids}}).status_code == 200
    assert all(clients == ["127.0.0.50"] for clients in answers_by_task(link).values())



@pytest.mark.django_db
def test_ten_workers_behind_one_address_are_served_after_others_filled_the_first_tasks():
    """The share of free slots was counted over the tasks the client could still take, so each of
    its holds shrank its own share: once ten workers elsewhere had filled the first tasks, a lab's
    tenth worker was refused (8 of 20 x 3 slots), below CROWD_HOLDS_PER_ADDRESS. The share is of the
    link's free slots, whoever arrived first."""
    link = judging_link(peers=20, judges=3)
    for i in range(10):
        assert lightweight_work.next_task(link, f"g{i}", own(f"g{i}")) is not None
    lab = lightweight_work.CrowdClient("127.0.0.50")
    held = [lightweight_work.next_task(link, f"lab{i}", lab) for i in range(10)]
    assert None not in held and len({task.pk for task in held}) == 10

@pytest.mark.django_db
def test_one_session_holds_at_most_its_cap(settings):
    link = judging_link(peers=20, judges=3)
    url = f"/lightweight/crowd/{link.token}/"
    page = Client(REMOTE_ADDR="127.0.0.70")
    statuses = []
    for i in range(settings.CROWD_HOLDS_PER_SESSION + 1):   # one browser, switching worker ids
        page.post(url + "?change", {"worker": f"s{i}"})
        statuses.append(page.get(url).status_code)
    assert statuses == [200] * settings.CROWD_HOLDS_PER_SESSION + [429]


@pytest.mark.django_db
def test_a_client_holds_at_most_its_share_of_the_free_slots():
    few = judging_link(peers=2, judges=2)   # 2 tasks x 2 judges: 4 free slots, a quarter each
    assert lightweight_work.next_task(few, "a1", lightweight_work.CrowdClient("127.0.0.80")) is not None
    with pytest.raises(lightweight_work.HoldLimit) as limit:
        lightweight_work.next_task(few, "a2", lightweight_work.CrowdClient("127.0.0.80"))
    assert 890 <= limit.value.retry_after <= 900
    assert lightweight_work.next_task(few, "b1", lightweight_work.CrowdClient("127.0.0.81")) is not None


# --- writings -------------------------------------------------------------------------------------

@pytest.mark.postgres
def test_writings_never_exceed_the_writers_asked_for(transactional_db, settings):
    """40 writings of one reference were taken where 4 were asked: writers sending at once (other
    addresses) fill it to writers_per_reference, and one address takes one writing per reference."""
    settings.CROWD_RATE = "100000/min"
    link = judging_link(peers=1, judges=1)
    run = link.pyramid
    run.writers_per_reference = 2   # judging_link's run has 1 writing per reference already
    run.save()
    writing = CrowdLink.objects.create(pyramid=run, kind=CrowdLink.Kind.WRITING)
    reference = ReferenceSummary.objects.get(topic__dataset=run.dataset, external_id="A")

    def write(worker, address):
        return APIClient(REMOTE_ADDR=address).post(f"/api/crowd/{writing.token}/", {
            "worker": worker, "reference": reference.pk, "statements": ["The storm came", "It was a Monday"]}, format="json").status_code

    statuses = at_once([lambda i=i: write(f"x{i}", f"127.0.4.{i}") for i in range(8)] +
                       [lambda i=i: write(f"y{i}", "127.0.0.66") for i in range(8)])
    assert statuses.count(201) == 1 and LiteWriting.objects.filter(pyramid=run, reference=reference).count() == 2
    assert LiteWriting.objects.filter(pyramid=run, reference=reference, client="127.0.0.66").count() <= 1


@pytest.mark.django_db
def test_a_late_answer_is_refused_when_its_client_has_answered_the_task_meanwhile():
    link = judging_link(peers=1, judges=2)
    lab = lightweight_work.CrowdClient("127.0.0.50")
    task = lightweight_work.next_task(link, "a1", lab)
    expire(worker_id="a1")
    assert lightweight_work.next_task(link, "a2", lab).pk == task.pk   # a1's hold expired: its slot is free again
    lightweight_work.submit_judgments(link, task, "a2", {pk: "present" for pk in task.statement_ids}, lab)
    with pytest.raises(lightweight_work.WorkError, match="Someone on your connection"):
        lightweight_work.submit_judgments(link, task, "a1", {pk: "absent" for pk in task.statement_ids}, lab)
    assert list(task.assignments.values_list("worker_id", flat=True)) == ["a2"]
