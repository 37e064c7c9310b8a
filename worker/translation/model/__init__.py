"""The model: loading, quantising and decoding a translation model; it never imports the scheduling."""
