"""Media pipeline: probing and transcoding videos, and scoring them with metrics."""
