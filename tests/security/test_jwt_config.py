"""JWT verification with a PEM public key file (the server tests use a JWKS file), and the
configurations refused at start: ``none`` or an HMAC algorithm allowed, no issuer or audience,
both key sources or a file that is not a public key. Real keys (``cryptography``), real tokens
(PyJWT), no server: the verifier is the unit the server calls."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgrag.auth.jwt import JwtConfig, JwtVerifier, TokenRejected
from kgrag.auth.principal import Role
from kgrag.errors import ConfigError
from tests.support.credentials import AUDIENCE, ISSUER, Issuer


@pytest.fixture(scope="module")
def issuer() -> Issuer:
    return Issuer.create()


@pytest.fixture
def pem_verifier(issuer: Issuer, tmp_path: Path) -> JwtVerifier:
    pem = tmp_path / "idp.pem"
    pem.write_bytes(issuer.public_pem())
    return JwtVerifier(JwtConfig(issuer=ISSUER, audience=AUDIENCE), public_key=pem)


def test_a_pem_key_verifies_its_tokens_and_maps_the_claims(
    issuer: Issuer, pem_verifier: JwtVerifier
) -> None:
    token = issuer.token(issuer.claims("ada", groups=["team-a"], roles=["writer", "root"]))
    p = pem_verifier.verify(token)
    assert (p.id, p.user, p.groups) == (f"jwt:{ISSUER}:ada", "ada", ("team-a",))
    assert p.roles == frozenset({Role.WRITER})  # a role kgrag does not know grants nothing
    assert p.access().admin is False


def test_configured_claim_names_are_read(issuer: Issuer, tmp_path: Path) -> None:
    pem = tmp_path / "idp.pem"
    pem.write_bytes(issuer.public_pem())
    config = JwtConfig(
        issuer=ISSUER,
        audience=AUDIENCE,
        user_claim="email",
        groups_claim="teams",
        roles_claim="kgrag_roles",
    )
    verifier = JwtVerifier(config, public_key=pem)
    claims = issuer.claims("x", email="ada@example.org", teams=["t"], kgrag_roles=["admin"])
    p = verifier.verify(issuer.token(claims))
    assert (p.user, p.groups, p.roles) == ("ada@example.org", ("t",), frozenset({Role.ADMIN}))
    with pytest.raises(TokenRejected, match="required claim"):
        verifier.verify(issuer.token(issuer.claims("x")))  # no email claim
    with pytest.raises(TokenRejected, match="not a list of strings"):
        verifier.verify(issuer.token({**claims, "teams": "t"}))


@pytest.mark.parametrize(
    ("forge", "reason"),
    [
        (lambda i, c: i.hmac_with_public_key(c), "algorithm not allowed"),
        (lambda i, c: i.unsigned_token(c), "algorithm not allowed"),
        (lambda i, c: i.token({**c, "iss": "https://evil.example"}), "another issuer"),
        (lambda i, c: i.token({**c, "aud": "x"}), "another audience"),
        (lambda i, c: i.token({**c, "exp": 1000, "iat": 1}), "expired"),
        (lambda i, c: Issuer.create().token(c), "signature does not verify"),
        (lambda i, c: i.token(c, alg="ES256"), "algorithm not allowed"),  # RSA key, EC token
    ],
)
def test_forged_tokens_are_rejected_with_the_pem_key(
    issuer: Issuer, pem_verifier: JwtVerifier, forge: object, reason: str
) -> None:
    token = forge(issuer, issuer.claims("ada", roles=["admin"]))  # type: ignore[operator]
    with pytest.raises(TokenRejected, match=reason):
        pem_verifier.verify(token)


@pytest.mark.parametrize("algorithms", [("none",), ("HS256",), ("RS256", "HS512"), ()])
def test_symmetric_or_no_algorithms_are_refused_in_the_configuration(
    algorithms: tuple[str, ...],
) -> None:
    with pytest.raises(ConfigError, match="KGRAG_JWT_ALGORITHMS"):
        JwtConfig(issuer=ISSUER, audience=AUDIENCE, algorithms=algorithms)


def test_issuer_audience_and_one_public_key_are_required(issuer: Issuer, tmp_path: Path) -> None:
    for iss, aud in (("", AUDIENCE), (ISSUER, "")):
        with pytest.raises(ConfigError, match="KGRAG_JWT_ISSUER and KGRAG_JWT_AUDIENCE"):
            JwtConfig(issuer=iss, audience=aud)
    config = JwtConfig(issuer=ISSUER, audience=AUDIENCE)
    pem = tmp_path / "idp.pem"
    pem.write_bytes(issuer.public_pem())
    jwks = issuer.write_jwks(tmp_path / "jwks.json")
    with pytest.raises(ConfigError, match="not both"):
        JwtVerifier(config, public_key=pem, jwks=jwks)
    with pytest.raises(ConfigError, match="not both"):
        JwtVerifier(config)
    private = tmp_path / "private.pem"
    from cryptography.hazmat.primitives import serialization

    private.write_bytes(
        issuer.rsa_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    with pytest.raises(ConfigError, match="not a PEM public key"):
        JwtVerifier(config, public_key=private)
    secret = tmp_path / "oct.json"
    secret.write_text('{"keys": [{"kty": "oct", "kid": "s", "k": "c2VjcmV0"}]}')
    with pytest.raises(ConfigError, match="symmetric"):
        JwtVerifier(config, jwks=secret)
