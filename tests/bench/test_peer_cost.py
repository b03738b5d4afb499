"""bench/peer_cost.py's pure parts: the spans every app is given, the plan of who writes what, the
/proc fields it reads, the statements it counts and the ratios it prints (issue 33)."""

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
import peer_cost  # noqa: E402

# A real /proc/<pid>/stat line's shape, with a command name holding a space and a ')': fields 14-15
# (utime, stime) = 70 + 30 ticks, 16-17 (cutime, cstime) = 5 + 7, 24 (rss) = 2500 pages.
STAT = (
    "4242 (gunicorn: wo) rker) S 1 4242 4242 0 -1 4194560 1200 0 0 0 70 30 5 7 20 0 3 0 "
    "1000 524288000 2500 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0"
)


def test_stat_fields_are_counted_after_the_last_parenthesis():
    assert peer_cost.parse_stat(STAT) == (100, 2500)
    assert peer_cost.children_ticks(STAT) == 12


def test_span_plan_gives_whole_words_in_order_without_overlap():
    text = " ".join(f"w{i}" for i in range(250)) + "."
    spans = peer_cost.span_plan(text, 20)
    assert len(spans) == 20
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(spans, spans[1:], strict=False))
    for start, end in spans:
        chosen = text[start:end]
        assert len(chosen.split()) == 3
        assert (start == 0 or text[start - 1] == " ") and (end == len(text) or text[end] in " .")
    # Spread over the whole text, not packed at its start.
    assert spans[-1][0] > len(text) * 0.9


def test_span_plan_of_a_short_text_gives_the_spans_it_has():
    assert peer_cost.span_plan("one two three four five six seven", 20) == [(0, 13), (14, 27)]
    assert peer_cost.span_plan("", 20) == []


def test_write_plan_gives_each_client_its_own_texts_span_after_span():
    plans = peer_cost.write_plan(clients=3, texts=7, spans=2)
    assert plans[0] == [(0, 0), (0, 1), (3, 0), (3, 1), (6, 0), (6, 1)]
    texts = [{t for t, _ in plan} for plan in plans]
    assert texts == [{0, 3, 6}, {1, 4}, {2, 5}]  # disjoint, and every text somewhere
    assert sum(len(plan) for plan in plans) == 7 * 2


def test_ratio_and_rate():
    assert peer_cost.ratio(104.0, 29.0) == "3.59x"
    assert peer_cost.ratio(20.0, 0.0) == "–"
    assert peer_cost.ratio(None, 5.0) == "–"
    assert peer_cost.per_hour(0.5, 60.0) == 30.0
    assert peer_cost.per_hour(1.0, 0.0) == 0.0


def test_request_log_counts_the_statements_of_writes_and_reads_from_the_mark(tmp_path):
    log = peer_cost.RequestLog(tmp_path)
    path = tmp_path / "requests.log"
    path.write_text("POST_201 0.01 0.02 21 0.003 0.001 SELECT\n")
    log.mark()  # what came before the window is not the window's
    with open(path, "a") as out:
        out.write("POST_201 0.01 0.02 20 0.003 0.001 INSERT INTO x\n")
        out.write("PATCH 0.01 0.02 7 0.003 0.001 UPDATE\n")
        out.write("GET_task 0.01 0.02 14 0.003 0.001 SELECT\n")
    assert dict(log.statements()) == {"write": 27, "read": 14}


class FakeBroker:
    def __init__(self, unacked: int, lists: dict[str, int]):
        self.unacked, self.lists = unacked, lists

    def hlen(self, key):
        assert key == "unacked"
        return self.unacked

    def scan_iter(self, match):
        return [k.encode() for k in [*self.lists, "_kombu.binding.celery"]]

    def type(self, key):
        return b"set" if key.startswith(b"_kombu") else b"list"

    def llen(self, key):
        return self.lists[key.decode()]


def test_jobs_pending_sees_queued_and_taken_tasks():
    assert not peer_cost.jobs_pending(FakeBroker(0, {"celery": 0, "dashboards": 0}))
    assert peer_cost.jobs_pending(FakeBroker(0, {"celery": 0, "dashboards": 1}))
    assert peer_cost.jobs_pending(FakeBroker(1, {"celery": 0}))  # running, or held for its countdown
