"""Regenerate pydantic_v2.json: ``python generate_pydantic.py > pydantic_v2.json`` (pydantic 2).

Each model is a tool's arguments as a Python tool author would write them; the
schema is exactly what ``Model.model_json_schema()`` prints.
"""

from __future__ import annotations

import json
import sys
from datetime import date, datetime
from enum import Enum
from typing import Any, Literal
from uuid import UUID

import pydantic
from pydantic import AnyUrl, BaseModel, EmailStr, Field


class Address(BaseModel):
    street: str = Field(description="Street and number")
    city: str
    postcode: str | None = None


class CreateContact(BaseModel):
    """Nested models with field descriptions: a described model field is $ref + description."""

    name: str = Field(description="Full name", min_length=1, max_length=200)
    home: Address = Field(description="Home address")
    work: Address | None = Field(default=None, description="Work address, if any")
    email: EmailStr | None = None
    tags: list[str] = Field(default_factory=list, max_length=10)


class Priority(str, Enum):
    low = "low"
    high = "high"


class SearchIssues(BaseModel):
    """Optional with defaults, Literal, Enum, bounds, formats."""

    query: str
    state: Literal["open", "closed", "all"] = "open"
    priority: Priority | None = None
    limit: int = Field(default=20, ge=1, le=100)
    since: datetime | None = None
    due: date | None = None
    homepage: AnyUrl | None = None
    id: UUID | None = None
    version: Literal[2] = 2


class LineItem(BaseModel):
    sku: str = Field(pattern=r"^[A-Z]{3}-\d+$")
    quantity: int = Field(gt=0)
    price: float = Field(ge=0, multiple_of=0.01)


class PlaceOrder(BaseModel):
    """A list of models, dict[str, X], a tuple."""

    items: list[LineItem] = Field(min_length=1)
    metadata: dict[str, str] = Field(default_factory=dict, description="Free-form labels")
    quantities: dict[str, int] = {}
    coordinates: tuple[float, float] | None = None


class TreeNode(BaseModel):
    """A recursive model."""

    label: str
    children: list[TreeNode] = []


class WriteTree(BaseModel):
    root: TreeNode = Field(description="The tree to write")
    overwrite: bool = False


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int = 9


class Dog(BaseModel):
    kind: Literal["dog"]
    good: bool = True


class AdoptPet(BaseModel):
    """A discriminated union (oneOf + discriminator) and a plain Union."""

    pet: Cat | Dog = Field(discriminator="kind")
    note: str | int | None = None


class Paginate(BaseModel):
    """A model with extra='allow' (additionalProperties: true)."""

    model_config = pydantic.ConfigDict(extra="allow")
    cursor: str | None = None


class Ticket(BaseModel):
    """An optional free-form object (dict[str, Any] | None), as FastMCP tools take one."""

    title: str
    extra: dict[str, Any] | None = Field(default=None, description="Any other fields")


MODELS = [CreateContact, SearchIssues, PlaceOrder, WriteTree, AdoptPet, Paginate, Ticket]

if __name__ == "__main__":
    json.dump({
        "source": f"pydantic {pydantic.VERSION}: Model.model_json_schema() of the models in "
                  "generate_pydantic.py",
        "schemas": {model.__name__: model.model_json_schema() for model in MODELS},
    }, sys.stdout, indent=1)
    sys.stdout.write("\n")
