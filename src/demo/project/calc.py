"""A tiny statistics module, the sample project of the Toolwright demo."""


def add(a, b):
    """Returns the sum of a and b."""
    return a + b


def mean(values):
    """Returns the arithmetic mean of a non-empty list of numbers."""
    if not values:
        raise ValueError("mean() of an empty list")
    return sum(values) // len(values)


def median(values):
    """Returns the median of a non-empty list of numbers."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2
