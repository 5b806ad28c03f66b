"""Credentials for tests of the authenticated HTTP API: API keys in a real key file
(:func:`kgrag.auth.apikeys.add_key`), and JWTs signed with keys made here (``cryptography``),
including the forged ones an attacker would send (``alg: none``, HS256 keyed with the public
key)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from kgrag.auth.apikeys import add_key
from kgrag.auth.principal import Role

ISSUER = "https://idp.test.example"
AUDIENCE = "kgrag-tests"


def new_key(path: Path, user: str, *roles: Role, groups: tuple[str, ...] = ()) -> tuple[str, str]:
    """``(key id, key)`` of a new API key in the key file ``path``."""
    entry, key = add_key(path, user=user, groups=groups, roles=list(roles))
    return entry.id, key


def bearer(credential: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {credential}"}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unsigned(header: Mapping[str, Any], claims: Mapping[str, Any]) -> str:
    return f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(claims).encode())}"


@dataclass
class Issuer:
    """An identity provider: an RSA key (kid ``rsa-1``) and an EC key (kid ``ec-1``), published
    as a JWKS file."""

    rsa_key: rsa.RSAPrivateKey
    ec_key: ec.EllipticCurvePrivateKey

    @classmethod
    def create(cls) -> Issuer:
        return cls(rsa.generate_private_key(65537, 2048), ec.generate_private_key(ec.SECP256R1()))

    def public_pem(self) -> bytes:
        return self.rsa_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )

    def write_jwks(self, path: Path) -> Path:
        keys = []
        for kid, alg, algorithm, key in (
            ("rsa-1", "RS256", jwt.algorithms.RSAAlgorithm, self.rsa_key.public_key()),
            ("ec-1", "ES256", jwt.algorithms.ECAlgorithm, self.ec_key.public_key()),
        ):
            jwk = json.loads(algorithm.to_jwk(key))
            keys.append({**jwk, "kid": kid, "alg": alg, "use": "sig"})
        path.write_text(json.dumps({"keys": keys}))
        return path

    @staticmethod
    def claims(user: str = "carol", **changes: Any) -> dict[str, Any]:
        now = int(time.time())
        base: dict[str, Any] = {
            "iss": ISSUER,
            "aud": AUDIENCE,
            "sub": user,
            "iat": now,
            "exp": now + 600,
            "groups": [],
            "roles": ["reader"],
        }
        base.update(changes)
        return {k: v for k, v in base.items() if v is not None}

    def token(
        self, claims: Mapping[str, Any], *, alg: str = "RS256", kid: str | None = None
    ) -> str:
        key: Any = self.rsa_key if alg.startswith(("RS", "PS")) else self.ec_key
        default_kid = "rsa-1" if key is self.rsa_key else "ec-1"
        return jwt.encode(dict(claims), key, algorithm=alg, headers={"kid": kid or default_kid})

    @staticmethod
    def unsigned_token(claims: Mapping[str, Any]) -> str:
        """``alg: none``: no signature at all."""
        return _unsigned({"alg": "none", "typ": "JWT"}, claims) + "."

    def hmac_with_public_key(self, claims: Mapping[str, Any], *, kid: str = "rsa-1") -> str:
        """HS256 keyed with the public key's PEM (the algorithm-confusion attack)."""
        signing_input = _unsigned({"alg": "HS256", "typ": "JWT", "kid": kid}, claims)
        mac = hmac.new(self.public_pem(), signing_input.encode(), hashlib.sha256).digest()
        return f"{signing_input}.{_b64(mac)}"
