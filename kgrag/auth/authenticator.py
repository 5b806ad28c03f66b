"""``Authorization: Bearer ...`` -> a :class:`~kgrag.auth.principal.Principal`, or the reason a
request is refused (401). A bearer value that starts with ``kgr_`` is an API key; any other is a
JWT. Reasons name what is wrong, never the credential or a claim's value."""

from __future__ import annotations

from kgrag.auth.apikeys import PREFIX, KeyRejected, KeyRing, read_keys
from kgrag.auth.jwt import JwtConfig, JwtVerifier, TokenRejected
from kgrag.auth.principal import Principal
from kgrag.config import Settings
from kgrag.errors import ConfigError


class Unauthenticated(Exception):
    """No valid credential; ``str()`` is safe to send to the client."""


class Authenticator:
    def __init__(self, keys: KeyRing | None, tokens: JwtVerifier | None) -> None:
        self.keys = keys
        self.tokens = tokens

    @classmethod
    def from_settings(cls, s: Settings) -> Authenticator | None:
        """The authenticator ``s`` configures, or None when it configures none (the server then
        serves only the local principal, on loopback). :class:`ConfigError` naming the setting
        when a configured file cannot be used."""
        keys = None
        if s.api_keys_file is not None:
            if not s.api_keys_file.exists():
                raise ConfigError(
                    f"KGRAG_API_KEYS_FILE {s.api_keys_file} does not exist: create a key with "
                    "`kgrag auth add-key --user NAME --role reader`"
                )
            read_keys(s.api_keys_file)  # a broken file is refused at start, not per request
            keys = KeyRing(s.api_keys_file)
        tokens = None
        if s.jwt_public_key_file is not None or s.jwt_jwks_file is not None:
            config = JwtConfig(
                issuer=s.jwt_issuer or "",
                audience=s.jwt_audience or "",
                algorithms=tuple(s.jwt_algorithms),
                user_claim=s.jwt_user_claim,
                groups_claim=s.jwt_groups_claim,
                roles_claim=s.jwt_roles_claim,
            )
            tokens = JwtVerifier(config, public_key=s.jwt_public_key_file, jwks=s.jwt_jwks_file)
        if keys is None and tokens is None:
            return None
        return cls(keys, tokens)

    def authenticate(self, authorization: str | None) -> Principal:
        if not authorization:
            raise Unauthenticated("no credential: send 'Authorization: Bearer <API key or JWT>'")
        scheme, _, value = authorization.partition(" ")
        value = value.strip()
        if scheme.lower() != "bearer" or not value:
            raise Unauthenticated("the Authorization header must be 'Bearer <API key or JWT>'")
        try:
            if value.startswith(PREFIX):
                if self.keys is None:
                    raise Unauthenticated("this server does not take API keys")
                return self.keys.authenticate(value)
            if self.tokens is None:
                raise Unauthenticated("this server does not take JWTs; send an API key")
            return self.tokens.verify(value)
        except (KeyRejected, TokenRejected) as e:
            raise Unauthenticated(str(e)) from None
