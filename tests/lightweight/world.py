"""A small crowd-written run for the page and service tests: one topic, two references, two
statements each (one per batch), ``peers`` peer summaries, so one task per peer and batch."""

from django.contrib.auth import get_user_model
from django.test import Client

from annotation.corpus.models import PeerSummary
from annotation.lightweight import work
from annotation.lightweight.models import LightweightPyramid

from tests.foundation.factories import topic
from tests.lightweight.test_crowd_submissions import own


def small_run(peers: int = 1, judges: int = 5) -> LightweightPyramid:
    t, refs = topic("D1", "Storms", A="The storm hit the coast on Monday.", B="Ten boats sank in the harbour.")
    for k in range(peers):
        PeerSummary.objects.create(topic=t, external_id=f"D1.M.100.A.{7 + 2 * k}", text=f"A storm hit the coast ({k}).")
    run = LightweightPyramid.objects.create(
        dataset=t.dataset,
        name="crowd",
        statements_per_writer=2,
        judges_per_task=judges,
        writers_per_reference=1,
        statements_per_reference=1,
    )
    work.submit_writing(run, refs["A"], "w1", ["The storm hit the coast", "It happened on a Monday"], own("w1", run))
    work.submit_writing(
        run, refs["B"], "w2", ["Ten boats sank in the harbour", "The boats were in a harbour"], own("w2", run)
    )
    work.sample(run)
    work.create_tasks(run)
    return run


def judge_every_task(link, worker: str, codes: str, record=None) -> None:
    """Hold and answer every task the link gives this worker, from a client of its own: statement k
    present when ``codes[k]`` is "p"; ``record(task)``: the platform's ids of each submission."""
    client = own(worker, link.pyramid)
    while (task := work.next_task(link, worker, client)) is not None:
        answers = {pk: "present" if c == "p" else "absent" for pk, c in zip(task.statement_ids, codes, strict=False)}
        work.submit_judgments(link, task, worker, answers, client, record=record(task) if record else None)


def client_for(name, dataset=None, **options) -> Client:
    user = get_user_model().objects.create_user(name)
    if dataset:
        dataset.coordinators.add(user)
    client = Client(**options)
    client.force_login(user)
    return client
