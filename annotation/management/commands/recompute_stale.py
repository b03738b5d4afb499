from django.core.management.base import BaseCommand

from annotation.peers.recompute import schedule_stale


class Command(BaseCommand):
    help = "Enqueue the recomputation of every stale or missing score and agreement figure."

    def handle(self, *args, **options):
        annotations, topics = schedule_stale()
        self.stdout.write(f"Enqueued {annotations} annotation(s) and {topics} topic(s).")
