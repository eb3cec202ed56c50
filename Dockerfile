FROM python:3.11-slim-bookworm
RUN apt-get update && apt-get install -y --no-install-recommends ffmpeg fonts-dejavu-core \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml README.md ./
COPY config config
COPY annotation annotation
COPY quality quality
COPY media_pipeline media_pipeline
COPY frontend frontend
COPY manage.py ./
RUN pip install --no-cache-dir .
USER nobody
EXPOSE 8000
