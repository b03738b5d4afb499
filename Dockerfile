FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
# pg_dump and pg_restore for `manage.py backup` / `restore` (docs/backup.md); Debian's are as new as the server or newer.
RUN apt-get update && apt-get install -y --no-install-recommends postgresql-client && rm -rf /var/lib/apt/lists/*
COPY pyproject.toml README.md ./
COPY pyramid_app pyramid_app
COPY annotation annotation
COPY scoring scoring
COPY frontend frontend
COPY manage.py ./
RUN pip install --no-cache-dir . && DEBUG=0 SECRET_KEY=collectstatic-only python manage.py collectstatic --noinput
EXPOSE 8000
CMD ["gunicorn", "pyramid_app.wsgi", "-c", "pyramid_app/gunicorn_conf.py", "--bind", "0.0.0.0:8000"]
