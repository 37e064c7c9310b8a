"""What the API and the workers share: settings, jobs, keys, splitting, cache, memory probe."""
