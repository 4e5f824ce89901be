"""The site on disk: the pipeline in one function, the owned-file writer, the build cache,
the vega bundle cache and the MkDocs plugin. The only room that writes into docs_dir."""
