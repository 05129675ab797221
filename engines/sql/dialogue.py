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

COURSE_DIALOGUE: tuple[str, ...] = (
    "hello",
    "Which autumn courses fit my schedule and are practical?",
    "Is C6 practical?",
    "What are the prerequisites of C3?",
    "When does C1 meet?",
    "How many courses have reviews?",
    "thanks",
)
"""The course assistant (note 003): the hard conditions and the text condition, then what stays
unknown (C6's practicality, C3's prerequisite), a meeting time, and counting courses rather than
review rows across a join."""
