from worker.translation.model.batching import fit_to_memory, plan_batches


def test_batches_are_sorted_and_bounded_by_tokens_and_count():
    lengths = [5, 100, 6, 7, 5, 90, 8, 4]
    batches = plan_batches(lengths, max_tokens=40, max_sentences=3)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for batch in batches:
        assert len(batch) <= 3
        assert len(batch) == 1 or max(lengths[i] for i in batch) * len(batch) <= 40
    # One long sentence never shares a batch with short ones.
    assert [1] in batches and [5] in batches


def test_many_short_sentences_fill_batches_of_even_sizes():
    batches = plan_batches([3] * 100, max_tokens=4096, max_sentences=32)
    assert [len(b) for b in batches] == [25, 25, 25, 25]
    assert [len(b) for b in plan_batches([3] * 64, max_tokens=4096, max_sentences=48)] == [32, 32]
    assert [len(b) for b in plan_batches([3] * 48, max_tokens=4096, max_sentences=48)] == [48]


def test_fit_to_memory_splits_and_reports_what_cannot_fit():
    lengths = [10, 10, 10, 10, 500]
    estimate = lambda size, tokens: size * tokens  # noqa: E731
    parts, too_big = fit_to_memory([0, 1, 2, 3], lengths, 25, estimate)
    assert sorted(i for p in parts for i in p) == [0, 1, 2, 3]
    assert all(estimate(len(p), 11) <= 25 for p in parts)
    assert too_big == []
    parts, too_big = fit_to_memory([4], lengths, 25, estimate)
    assert parts == [] and too_big == [4]
