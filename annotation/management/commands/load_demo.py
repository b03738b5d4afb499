from django.core.management.base import BaseCommand

from annotation.corpus.models import Dataset
from annotation.lightweight.demo import load_demo_run
from annotation.peers.demo import DATASET, load_demo


class Command(BaseCommand):
    help = "Load the demo dataset, its lightweight run and the demo users (idempotent) and print the demo logins."

    def handle(self, *args, **options):
        result = load_demo()
        if result.created:
            load_demo_run(Dataset.objects.get(name=DATASET))
        self.stdout.write("Demo dataset " + ("loaded." if result.created else "already present, left as it is."))
        self.stdout.write("Demo logins (development only):")
        for username, password in result.users:
            self.stdout.write(f"  {username:<12} {password}")
