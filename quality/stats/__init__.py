"""Pure statistics over ratings (numpy/scipy only, no Django)."""
