"""Processing jobs for stimuli: transcode_jobs (ffmpeg renditions), score_jobs (baseline
metrics, gpu queue) and job_sweep (sending lost or abandoned jobs again)."""
