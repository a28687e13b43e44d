"""compactsim: the `compactsim` command (the Rust binary this wheel carries), the SDK
for adapters (`compactsim.sdk`, standard library only) and a pytest plugin
(`compactsim.pytest_plugin`)."""
