"""Write docs/architecture.md: each concept's home, every URL pattern, Celery task and score function
with the module that holds it, read from the code itself (so the page cannot drift: a test
regenerates it and compares)."""

from django.core.management.base import BaseCommand

from annotation.architecture import render


class Command(BaseCommand):
    help = "Print the architecture page (docs/architecture.md) generated from the code."

    def add_arguments(self, parser):
        parser.add_argument("--output", help="write to this file instead of standard output")

    def handle(self, *args, output=None, **options):
        text = render()
        if output:
            with open(output, "w", encoding="utf-8") as handle:
                handle.write(text)
            self.stdout.write(f"wrote {output}")
        else:
            self.stdout.write(text, ending="")
