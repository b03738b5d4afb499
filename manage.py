#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import gc
import os
import sys


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pyramid_app.settings")
    # Start-up creates a few hundred thousand objects that live as long as the process (modules,
    # classes, the app registry): the collector's passes over them while they are created are
    # wasted (a tenth of a command's start-up). Collect nothing until Django is set up, then keep
    # them out of every later pass (``gc.freeze``).
    gc.disable()
    try:
        import django

        django.setup()
    except Exception:  # noqa: BLE001 - a broken configuration is reported by the command line below, as Django does
        pass
    finally:
        gc.freeze()
        gc.enable()
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
