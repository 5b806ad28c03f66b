"""JWT bearer tokens, verified with PyJWT against a public key the operator configured: one PEM
file (``KGRAG_JWT_PUBLIC_KEY_FILE``) or a local JWKS file (``KGRAG_JWT_JWKS_FILE``, keys chosen
by ``kid``; nothing is fetched over the network). The issuer and audience are required and
checked, as are ``exp`` and the user claim. Only asymmetric algorithms are allowed (default
RS256 and ES256): ``none`` and the HMAC family (HS*) are refused in the configuration, so a token
signed with the public key as an HMAC secret can never verify."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
from cryptography.hazmat.primitives.serialization import load_pem_public_key

from kgrag.auth.principal import Principal, Role
from kgrag.errors import ConfigError

#: The algorithms a configuration may allow: public-key signatures only.
ASYMMETRIC = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)
DEFAULT_ALGORITHMS = ("RS256", "ES256")
#: Seconds of clock difference tolerated on ``exp``, ``nbf`` and ``iat``.
LEEWAY_S = 30


class TokenRejected(Exception):
    """A token that does not authenticate (the reason is safe to show: no claim value)."""


@dataclass(frozen=True)
class JwtConfig:
    issuer: str
    audience: str
    algorithms: tuple[str, ...] = DEFAULT_ALGORITHMS
    user_claim: str = "sub"
    groups_claim: str = "groups"
    roles_claim: str = "roles"
    leeway_s: int = LEEWAY_S

    def __post_init__(self) -> None:
        if not self.issuer or not self.audience:
            raise ConfigError(
                "JWT verification needs KGRAG_JWT_ISSUER and KGRAG_JWT_AUDIENCE (both checked)"
            )
        if not self.algorithms:
            raise ConfigError('KGRAG_JWT_ALGORITHMS is empty: allow e.g. ["RS256"]')
        bad = [a for a in self.algorithms if a not in ASYMMETRIC]
        if bad:
            raise ConfigError(
                f"KGRAG_JWT_ALGORITHMS allows {bad}: only public-key algorithms are accepted "
                f"({', '.join(sorted(ASYMMETRIC))}); never 'none' or HS*"
            )


_PublicKey = (
    rsa.RSAPublicKey | ec.EllipticCurvePublicKey | ed25519.Ed25519PublicKey | ed448.Ed448PublicKey
)


def _family(key: Any) -> frozenset[str]:
    """The algorithms a public key can verify."""
    if isinstance(key, rsa.RSAPublicKey):
        return frozenset(a for a in ASYMMETRIC if a[:2] in ("RS", "PS"))
    if isinstance(key, ec.EllipticCurvePublicKey):
        return frozenset(a for a in ASYMMETRIC if a.startswith("ES"))
    return frozenset({"EdDSA"})


def _pem_key(path: Path) -> Any:
    try:
        key = load_pem_public_key(path.read_bytes())
    except OSError as e:
        raise ConfigError(f"cannot read KGRAG_JWT_PUBLIC_KEY_FILE {path}: {e.strerror}") from e
    except ValueError as e:
        raise ConfigError(
            f"KGRAG_JWT_PUBLIC_KEY_FILE {path} is not a PEM public key ({e})"
        ) from None
    if not isinstance(key, _PublicKey):
        raise ConfigError(f"KGRAG_JWT_PUBLIC_KEY_FILE {path} holds a {type(key).__name__}")
    return key


def _jwks(path: Path) -> dict[str, jwt.PyJWK]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        keys = jwt.PyJWKSet.from_dict(data).keys
    except OSError as e:
        raise ConfigError(f"cannot read KGRAG_JWT_JWKS_FILE {path}: {e.strerror}") from e
    except (ValueError, jwt.PyJWTError) as e:
        raise ConfigError(f"KGRAG_JWT_JWKS_FILE {path} is not a JWK set ({e})") from None
    out: dict[str, jwt.PyJWK] = {}
    for k in keys:
        if not k.key_id:
            raise ConfigError(f"KGRAG_JWT_JWKS_FILE {path}: every key needs a 'kid'")
        if k.key_type == "oct":
            raise ConfigError(f"KGRAG_JWT_JWKS_FILE {path}: key {k.key_id!r} is symmetric")
        out[k.key_id] = k
    return out


#: PyJWT's errors -> the reason a client is told.
_REASONS: tuple[tuple[type[Exception], str], ...] = (
    (jwt.ExpiredSignatureError, "token expired"),
    (jwt.ImmatureSignatureError, "token not yet valid"),
    (jwt.InvalidIssuerError, "token from another issuer"),
    (jwt.InvalidAudienceError, "token for another audience"),
    (jwt.InvalidSignatureError, "token signature does not verify"),
    (jwt.MissingRequiredClaimError, "token lacks a required claim"),
    (jwt.InvalidAlgorithmError, "token algorithm not allowed"),
    (jwt.DecodeError, "malformed token"),
)


class JwtVerifier:
    """Verifies a token and turns its claims into a :class:`Principal`."""

    def __init__(
        self, config: JwtConfig, *, public_key: Path | None = None, jwks: Path | None = None
    ) -> None:
        if (public_key is None) == (jwks is None):
            raise ConfigError(
                "configure one of KGRAG_JWT_PUBLIC_KEY_FILE or KGRAG_JWT_JWKS_FILE, not both"
            )
        self.config = config
        self._key = _pem_key(public_key) if public_key is not None else None
        self._key_algorithms = _family(self._key) if self._key is not None else ASYMMETRIC
        self._jwks = _jwks(jwks) if jwks is not None else {}

    def _key_for(self, header: Mapping[str, Any]) -> Any:
        if self._key is not None:
            if header.get("alg") not in self._key_algorithms:
                raise TokenRejected("token algorithm not allowed")
            return self._key
        found = self._jwks.get(str(header.get("kid")))
        if found is None:
            raise TokenRejected("token signed with an unknown key id")
        if found.algorithm_name and found.algorithm_name != header.get("alg"):
            raise TokenRejected("token algorithm not allowed")
        return found.key

    def verify(self, token: str) -> Principal:
        c = self.config
        try:
            header = jwt.get_unverified_header(token)
            alg = header.get("alg")
            if alg not in c.algorithms:
                raise TokenRejected("token algorithm not allowed")
            claims = jwt.decode(
                token,
                self._key_for(header),
                algorithms=[alg],
                audience=c.audience,
                issuer=c.issuer,
                leeway=c.leeway_s,
                options={"require": ["exp", "iss", "aud", c.user_claim]},
            )
        except jwt.PyJWTError as e:
            reason = next((r for cls, r in _REASONS if isinstance(e, cls)), "invalid token")
            raise TokenRejected(reason) from None
        except (TypeError, ValueError):  # a key PyJWT cannot use for this token's algorithm
            raise TokenRejected("invalid token") from None
        return self._principal(claims)

    def _principal(self, claims: Mapping[str, Any]) -> Principal:
        c = self.config
        user = claims.get(c.user_claim)
        groups = claims.get(c.groups_claim, [])
        roles = claims.get(c.roles_claim, [])
        if not isinstance(user, str):
            raise TokenRejected(f"token claim {c.user_claim!r} is not a string")
        for name, value in ((c.groups_claim, groups), (c.roles_claim, roles)):
            if not _strings(value):
                raise TokenRejected(f"token claim {name!r} is not a list of strings")
        known = {r.value for r in Role}
        try:
            return Principal(
                id=f"jwt:{claims['iss']}:{claims.get('sub', user)}",
                user=user,
                groups=tuple(groups),
                roles=frozenset(Role(r) for r in roles if r in known),
            )
        except ValueError:
            raise TokenRejected("token names an invalid user or group") from None


def _strings(value: object) -> bool:
    return (
        isinstance(value, Sequence)
        and not isinstance(value, str)
        and all(isinstance(v, str) for v in value)
    )
