"""Lecture 6 §3.4: the eight-turn dialogue (follow-ups, a café, a definition, no results, thanks).

Kept apart from the agent so the app can list it without loading the database engines.
"""
from __future__ import annotations

SAMPLE_DIALOGUE: tuple[str, ...] = (
    "Show me restaurants in Menlo Park.",
    "What about italian ones?",
    "How about in Palo Alto?",
    "Which one is the top-rated?",
    "Show me a café there instead.",
    "What is dim sum?",
    "Show me luxury vegan places in Sunnyvale with at least 4.5 stars.",
    "Thanks!",
)
