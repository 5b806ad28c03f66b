"""Who is asking: principals and their roles (:mod:`.principal`), operator-managed API keys
(:mod:`.apikeys`), JWT bearer tokens (:mod:`.jwt`), and the authenticator that turns an
``Authorization`` header into a principal (:mod:`.authenticator`)."""

from kgrag.auth.principal import LOCAL, Principal, Role

__all__ = ["LOCAL", "Principal", "Role"]
