"""What a manifest author is told when the manifest is wrong, and how the checks find it.

``_validation_errors`` turns pydantic's errors into ``PATH: message`` lines, ``_jsontext`` decodes
manifest text as strict JSON, ``_template_checks`` checks hook templates at load time,
``_references`` finds hooks that name undeclared toolsets, and ``_suggest`` adds the did-you-mean.
None of it is public API: the layers above import each name from its private module.
"""
