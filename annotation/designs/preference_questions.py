"""The questions of a side-by-side preference study (annotation.designs.preference) as
WYD asked them: its four templates, word for word."""

from __future__ import annotations

# WYD's four templates (appendix Sec. D), word for word; (key, label, question, reference).
WYD_QUESTIONS: tuple[tuple[str, str, str, bool], ...] = (
    (
        "video_quality",
        "Video quality",
        "Choose the video that you think is of highest quality (less defects, distortions, "
        "artifacts, excessive blur, etc.). If both have the same quality, choose the one that "
        "is more appealing to you (more interesting, better composition, etc.). If both "
        "videos are equally appealing, click on “Equally Good/Bad.”",
        False,
    ),
    (
        "video_motion_similarity",
        "Video motion similarity",
        "Choose the video that you think best matches the motion of the entire reference "
        "video (shown in the middle). Please try to ignore potential defects or bad quality "
        "of the videos. If both videos equally follow the motion of the reference video, "
        "click on “Equally Good/Bad.”",
        True,
    ),
    (
        "human_quality",
        "Human quality w.r.t. reference",
        "Choose the video that you think has the highest quality (less defects, distortions, "
        "artifacts, excessive blur, etc.) for the people highlighted in the reference video "
        "(shown in the middle). If the highlighted people in both videos are equally "
        "good/bad, click on “Equally Good/Bad.”",
        True,
    ),
    (
        "human_motion",
        "Human motion w.r.t. reference",
        "Choose the video that you think best matches the movements of the people in the "
        "reference video (shown in the middle). Please try to ignore potential defects or "
        "bad quality of the videos. If both videos equally follow the motion of the "
        "reference video, click on “Equally Good/Bad.”",
        True,
    ),
)
