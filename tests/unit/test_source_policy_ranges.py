"""Issue 38, third attack F4 and F6: networks and addresses the source policy judged
wrongly, without a socket.

F6: site-local ``fec0::/10``, the local-use NAT64 prefix ``64:ff9b:1::/48``, and NAT64
``64:ff9b::/96`` or 6to4 ``2002::/16`` addresses whose IPv4 address inside is private
counted as public for the rules on redirects and a feed's origin.
F4: a network given in its IPv4-mapped IPv6 form (``::ffff:127.0.0.0/104``) was taken
and matched nothing (a connected address is judged as IPv4)."""

from __future__ import annotations

import pytest

import vidapi_async as va

PUBLIC = "93.184.216.34"


@pytest.mark.parametrize(
    "inner",
    [
        "fec0::1",  # site-local
        "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
        "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
        "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
        "64:ff9b:1::a00:1",  # local-use NAT64
        "2002:a00:1::",  # 6to4 of 10.0.0.1
        "2002:7f00:1::1",  # 6to4 of 127.0.0.1
        "::a00:1",  # IPv4-compatible form of 10.0.0.1
    ],
)
def test_internal_ipv6_ranges_are_not_public(inner: str) -> None:
    named = va.SourcePolicy(origin=PUBLIC)
    why = named.refusal(inner)
    assert why is not None and "SourcePolicy.origin" in why, inner
    redirected = va.SourcePolicy().refusal(inner, previous=PUBLIC)
    assert redirected is not None and "redirect" in redirected, inner
    # and an origin there does not count as public: the rule does not bind
    assert va.SourcePolicy(origin=inner).refusal("10.0.0.5") is None


@pytest.mark.parametrize("outer", ["64:ff9b::808:808", "2002:808:808::1", "2606:4700::1111"])
def test_nat64_and_6to4_of_a_public_address_stay_public(outer: str) -> None:
    assert va.SourcePolicy(origin=PUBLIC).refusal(outer) is None


@pytest.mark.parametrize("field", ["deny", "allow"])
def test_an_ipv4_mapped_network_is_read_as_its_ipv4_network(field: str) -> None:
    mapped = va.SourcePolicy(**{field: ["::ffff:127.0.0.0/104"]})  # type: ignore[arg-type]
    plain = va.SourcePolicy(**{field: ["127.0.0.0/8"]})  # type: ignore[arg-type]
    assert getattr(mapped, field) == getattr(plain, field)
    for ip in ("127.0.0.1", "::ffff:127.0.0.1", "8.8.8.8"):
        assert (mapped.refusal(ip) is None) == (plain.refusal(ip) is None), (field, ip)
    assert va.SourcePolicy(deny=["::ffff:127.0.0.0/104"]).refusal("127.0.0.1") is not None
