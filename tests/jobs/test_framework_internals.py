"""What ``annotation.jobs.framework_internals`` relies on in Django, redis-py and django-csp: each
test fails when an upgrade changes the private part its function uses, or what it does."""

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.db import connection, transaction
from django.http import HttpResponse
from django.test import RequestFactory, override_settings

from annotation.corpus.models import Topic
from annotation.jobs import framework_internals, queue


@pytest.mark.redis
def test_the_redis_client_is_the_one_the_cache_writes_with():
    import redis

    backend = caches["default"]
    assert isinstance(backend, RedisCache) and queue.redis_cache() is backend
    key = backend.make_and_validate_key("framework-internals")
    client = framework_internals.redis_client(backend, key)
    assert isinstance(client, redis.Redis) and framework_internals.redis_client(backend) is not None
    backend.set("framework-internals", 5, 30)
    # Django stores an integer as itself (not pickled): the pipelines' INCR and the cache's reads agree,
    # on the same server and database
    assert client.incr(key) == 6 and backend.get("framework-internals") == 6
    with client.pipeline(transaction=True) as pipe:
        pipe.set(key, 0, ex=30, nx=True).incr(key).ttl(key)
        _, count, ttl = pipe.execute()
    assert count == 7 and 0 < ttl <= 30  # the cache's expiry kept
    backend.delete("framework-internals")
    assert client.get(key) is None


class _Batch:
    def __init__(self):
        self.flushed = 0

    def flush(self):
        self.flushed += 1


def test_an_on_commit_callback_is_found_in_the_connection_s_list(db):
    def callback():
        pass

    with transaction.atomic():
        transaction.on_commit(callback)
        entry = connection.run_on_commit[-1]
        assert entry[1] is callback and isinstance(entry[0], set | list | tuple)


def test_a_transaction_keeps_one_batch_flushed_once_at_its_commit(transactional_db):
    with transaction.atomic():
        first = framework_internals.transaction_batch("_framework_internals_test", _Batch)
        assert framework_internals.transaction_batch("_framework_internals_test", _Batch) is first
        with transaction.atomic():  # a savepoint kept: the same batch
            assert framework_internals.transaction_batch("_framework_internals_test", _Batch) is first
        assert first.flushed == 0
    assert first.flushed == 1
    with transaction.atomic():  # the next transaction has a batch of its own
        assert framework_internals.transaction_batch("_framework_internals_test", _Batch) is not first


def test_a_batch_made_in_a_rolled_back_savepoint_is_forgotten_with_it(db):
    with transaction.atomic():
        with transaction.atomic():
            dropped = framework_internals.transaction_batch("_framework_internals_test", _Batch)
            transaction.set_rollback(True)
        kept = framework_internals.transaction_batch("_framework_internals_test", _Batch)
        assert kept is not dropped
        assert [entry[1] for entry in connection.run_on_commit if entry[1] in (kept.flush, dropped.flush)] == [
            kept.flush
        ]


def test_a_kept_query_runs_again_in_copies_that_never_change_it(db, django_assert_num_queries):
    Topic.objects.none()  # the model's manager is ready
    kept = Topic.objects.filter(external_id__startswith="T").query
    sql = str(kept)
    with django_assert_num_queries(0):
        copy = framework_internals.queryset_of(Topic, kept)
    narrowed = copy.filter(pk=1).exclude(title="x")
    assert str(kept) == sql and str(copy.query) == sql and str(narrowed.query) != sql
    assert copy.model is Topic and copy.query is not kept and list(copy) == []


@override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"])
def test_a_password_being_set_is_told_from_a_rehash(db):
    user = User.objects.create_user("framework-internals", password="old")
    assert not framework_internals.password_being_set(user)  # saved
    user.set_password("new")
    assert framework_internals.password_being_set(user)
    user.save()
    assert not framework_internals.password_being_set(User.objects.get(pk=user.pk))
    user.set_unusable_password()  # no raw password to keep
    assert not framework_internals.password_being_set(user)
    user.save()
    seen = []

    def on_save(sender, instance, update_fields=None, **kwargs):
        seen.append((framework_internals.password_being_set(instance), set(update_fields or ())))

    from django.db.models.signals import pre_save

    user.set_password("same")
    user.save()
    with override_settings(
        PASSWORD_HASHERS=[
            "django.contrib.auth.hashers.PBKDF2PasswordHasher",
            "django.contrib.auth.hashers.MD5PasswordHasher",
        ]
    ):
        pre_save.connect(on_save, sender=User)
        try:
            assert user.check_password("same")  # a newer hasher: Django saves the same password re-hashed
        finally:
            pre_save.disconnect(on_save, sender=User)
    assert seen == [(False, {"password"})]


@pytest.mark.parametrize("write", [framework_internals.replace_csp, framework_internals.update_csp])
def test_a_response_s_own_policy_reaches_the_header(write):
    from csp.middleware import CSPMiddleware

    response = HttpResponse()
    write(response, {"frame-ancestors": ["https://example.org"]})
    request = RequestFactory().get("/")
    CSPMiddleware(lambda r: response).process_response(request, response)
    header = response.get("Content-Security-Policy", "") or response.get("Content-Security-Policy-Report-Only", "")
    assert "frame-ancestors" in header and "https://example.org" in header, (header, settings.CONTENT_SECURITY_POLICY)


def _topics_named_after(dataset: int, lowest: int):
    """A kept statement's build: a filter on two ids, a constant, an ordering."""
    return Topic.objects.filter(dataset_id=dataset, pk__gte=lowest, external_id__startswith="T").values_list(
        "id", "external_id"
    )


def _ignores(dataset: int):
    return Topic.objects.values_list("id")


def test_a_kept_statement_reads_the_orms_rows_for_each_ids_composed_once(db):
    from annotation.corpus.models import Dataset

    datasets = [Dataset.objects.create(name=f"D{i}") for i in range(2)]
    topics = [Topic.objects.create(dataset=d, external_id=f"{p}{i}") for d in datasets for i in range(3) for p in "TU"]
    framework_internals._kept.cache_clear()
    for dataset in datasets:
        for lowest in (0, topics[4].pk):
            rows = framework_internals.kept_rows(_topics_named_after, dataset=dataset.pk, lowest=lowest)
            assert sorted(rows) == sorted(_topics_named_after(dataset.pk, lowest)) and rows
    info = framework_internals._kept.cache_info()
    assert (info.misses, info.hits) == (1, 3)
    with pytest.raises(ValueError, match="not parameters"):
        framework_internals.kept_rows(_ignores, dataset=datasets[0].pk)
    with pytest.raises(TypeError):
        framework_internals.kept_rows(_topics_named_after, dataset=str(datasets[0].pk), lowest=0)
