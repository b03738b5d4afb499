from django.core.management.base import BaseCommand

from annotation.corpus.demo import load_demo


class Command(BaseCommand):
    help = "Load the demo dataset and demo users (idempotent) and print the demo logins."

    def handle(self, *args, **options):
        result = load_demo()
        self.stdout.write("Demo dataset " + ("loaded." if result.created else "already present, left as it is."))
        self.stdout.write("Demo logins (development only):")
        for username, password in result.users:
            self.stdout.write(f"  {username:<12} {password}")
