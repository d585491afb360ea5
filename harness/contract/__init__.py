"""The judge.json contract: the rubric, the strict check, the model, the fallback."""
