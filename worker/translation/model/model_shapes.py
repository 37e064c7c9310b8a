"""The offline test model's shapes (worker.translation.model.offline_model): tiny for tests, copy for the model
that copies, opus for opus-mt-zh-en's exact shape (the benchmarks')."""

SHAPES = {
    "tiny": dict(
        d_model=32,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        vocab_size=0,
    ),
    "copy": dict(  # the copy model (worker.translation.model.copy_construction): one head, no feed-forward work
        d_model=256,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=1,
        decoder_attention_heads=1,
        encoder_ffn_dim=4,
        decoder_ffn_dim=4,
        vocab_size=0,
    ),
    "opus": dict(
        d_model=512,
        encoder_layers=6,
        decoder_layers=6,
        encoder_attention_heads=8,
        decoder_attention_heads=8,
        encoder_ffn_dim=2048,
        decoder_ffn_dim=2048,
        vocab_size=65001,
    ),
}
