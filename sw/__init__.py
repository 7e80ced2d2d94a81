"""Host library: golden model, datasets, estimators and software-side methods."""
