"""CI credentials a memory store never needs, kept from it.

A CI job's environment holds tokens that can push code, publish packages or mint cloud credentials:
GitHub's ``GITHUB_TOKEN`` and the Actions runtime's tokens (which a Docker container action is
given), and their kin on other CI services. The runner removes the variables of
:data:`CREDENTIALS` from its environment before any worker starts, so neither the workers nor the
store (nor a library it uses that picks a token up by itself) inherit them, and their values join
the run's secrets, redacted wherever they would appear. Only the runner does this, not a pytest
session of the user's that loads the plugin: that environment is the user's.

This keeps a store from using or leaking a token by accident. It does not hide the values from a
store written to find them: a process of the same user can read its parents' initial environment
in /proc (see docs/threat-model.md).
"""

from __future__ import annotations

import os
from typing import MutableMapping

# the variables removed; those not named *_URL are tokens, whose values are redacted too
CREDENTIALS = (
    # GitHub Actions: the repository token as workflows pass it, and the runtime's (artifacts, cache, OIDC)
    "GITHUB_TOKEN", "GH_TOKEN", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_URL", "ACTIONS_RUNTIME_URL", "ACTIONS_CACHE_URL", "ACTIONS_RESULTS_URL",
    # GitLab CI, Azure Pipelines, Buildkite, CircleCI
    "CI_JOB_TOKEN", "CI_JOB_JWT", "CI_JOB_JWT_V2", "CI_REGISTRY_PASSWORD", "CI_DEPLOY_PASSWORD",
    "SYSTEM_ACCESSTOKEN", "BUILDKITE_AGENT_ACCESS_TOKEN", "CIRCLE_OIDC_TOKEN", "CIRCLE_OIDC_TOKEN_V2",
    # package registries' publishing tokens
    "NPM_TOKEN", "NODE_AUTH_TOKEN", "TWINE_PASSWORD", "PYPI_TOKEN",
)


def withdraw(environ: MutableMapping[str, str] = os.environ) -> list[str]:
    """Remove :data:`CREDENTIALS` from ``environ``; return the tokens' values, for redaction."""
    secrets = []
    for name in CREDENTIALS:
        value = environ.pop(name, None)
        if value and not name.endswith("_URL"):
            secrets.append(value.strip())
    return secrets
