"""Quality analysis: MOS, agreement and rater screening over collected ratings."""
