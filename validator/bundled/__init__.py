"""The rulesets and schemas shipped with ruleval (``extends "bundled:FAMILY/NAME.rules"``).

In an installed package they lie here, as ``rulesets/`` and ``schemas/``; in a source checkout they
are the checkout's own top-level folders (see ``validator.core.confine.bundle_root``)."""
