from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Space(_message.Message):
    __slots__ = ("kind", "shape", "low", "high", "n")
    class Kind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        KIND_UNSPECIFIED: _ClassVar[Space.Kind]
        BOX: _ClassVar[Space.Kind]
        DISCRETE: _ClassVar[Space.Kind]
    KIND_UNSPECIFIED: Space.Kind
    BOX: Space.Kind
    DISCRETE: Space.Kind
    KIND_FIELD_NUMBER: _ClassVar[int]
    SHAPE_FIELD_NUMBER: _ClassVar[int]
    LOW_FIELD_NUMBER: _ClassVar[int]
    HIGH_FIELD_NUMBER: _ClassVar[int]
    N_FIELD_NUMBER: _ClassVar[int]
    kind: Space.Kind
    shape: _containers.RepeatedScalarFieldContainer[int]
    low: _containers.RepeatedScalarFieldContainer[float]
    high: _containers.RepeatedScalarFieldContainer[float]
    n: int
    def __init__(self, kind: _Optional[_Union[Space.Kind, str]] = ..., shape: _Optional[_Iterable[int]] = ..., low: _Optional[_Iterable[float]] = ..., high: _Optional[_Iterable[float]] = ..., n: _Optional[int] = ...) -> None: ...

class EnvSpec(_message.Message):
    __slots__ = ("id", "doc", "options")
    ID_FIELD_NUMBER: _ClassVar[int]
    DOC_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    id: str
    doc: str
    options: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, id: _Optional[str] = ..., doc: _Optional[str] = ..., options: _Optional[_Iterable[str]] = ...) -> None: ...

class ListEnvsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListEnvsResponse(_message.Message):
    __slots__ = ("envs",)
    ENVS_FIELD_NUMBER: _ClassVar[int]
    envs: _containers.RepeatedCompositeFieldContainer[EnvSpec]
    def __init__(self, envs: _Optional[_Iterable[_Union[EnvSpec, _Mapping]]] = ...) -> None: ...

class MakeRequest(_message.Message):
    __slots__ = ("env_id", "num_envs", "options")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ENV_ID_FIELD_NUMBER: _ClassVar[int]
    NUM_ENVS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    env_id: str
    num_envs: int
    options: _containers.ScalarMap[str, str]
    def __init__(self, env_id: _Optional[str] = ..., num_envs: _Optional[int] = ..., options: _Optional[_Mapping[str, str]] = ...) -> None: ...

class MakeResponse(_message.Message):
    __slots__ = ("handle", "num_envs", "observation_space", "action_space", "max_episode_steps")
    HANDLE_FIELD_NUMBER: _ClassVar[int]
    NUM_ENVS_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_SPACE_FIELD_NUMBER: _ClassVar[int]
    ACTION_SPACE_FIELD_NUMBER: _ClassVar[int]
    MAX_EPISODE_STEPS_FIELD_NUMBER: _ClassVar[int]
    handle: int
    num_envs: int
    observation_space: Space
    action_space: Space
    max_episode_steps: int
    def __init__(self, handle: _Optional[int] = ..., num_envs: _Optional[int] = ..., observation_space: _Optional[_Union[Space, _Mapping]] = ..., action_space: _Optional[_Union[Space, _Mapping]] = ..., max_episode_steps: _Optional[int] = ...) -> None: ...

class ResetRequest(_message.Message):
    __slots__ = ("handle", "seeds", "options")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    HANDLE_FIELD_NUMBER: _ClassVar[int]
    SEEDS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    handle: int
    seeds: _containers.RepeatedScalarFieldContainer[int]
    options: _containers.ScalarMap[str, str]
    def __init__(self, handle: _Optional[int] = ..., seeds: _Optional[_Iterable[int]] = ..., options: _Optional[_Mapping[str, str]] = ...) -> None: ...

class Info(_message.Message):
    __slots__ = ("values",)
    class ValuesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.ScalarMap[str, float]
    def __init__(self, values: _Optional[_Mapping[str, float]] = ...) -> None: ...

class ResetResponse(_message.Message):
    __slots__ = ("observations", "infos")
    OBSERVATIONS_FIELD_NUMBER: _ClassVar[int]
    INFOS_FIELD_NUMBER: _ClassVar[int]
    observations: bytes
    infos: _containers.RepeatedCompositeFieldContainer[Info]
    def __init__(self, observations: _Optional[bytes] = ..., infos: _Optional[_Iterable[_Union[Info, _Mapping]]] = ...) -> None: ...

class StepRequest(_message.Message):
    __slots__ = ("handle", "actions", "autoreset")
    HANDLE_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    AUTORESET_FIELD_NUMBER: _ClassVar[int]
    handle: int
    actions: bytes
    autoreset: bool
    def __init__(self, handle: _Optional[int] = ..., actions: _Optional[bytes] = ..., autoreset: _Optional[bool] = ...) -> None: ...

class StepResponse(_message.Message):
    __slots__ = ("observations", "rewards", "terminated", "truncated", "infos")
    OBSERVATIONS_FIELD_NUMBER: _ClassVar[int]
    REWARDS_FIELD_NUMBER: _ClassVar[int]
    TERMINATED_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    INFOS_FIELD_NUMBER: _ClassVar[int]
    observations: bytes
    rewards: _containers.RepeatedScalarFieldContainer[float]
    terminated: _containers.RepeatedScalarFieldContainer[bool]
    truncated: _containers.RepeatedScalarFieldContainer[bool]
    infos: _containers.RepeatedCompositeFieldContainer[Info]
    def __init__(self, observations: _Optional[bytes] = ..., rewards: _Optional[_Iterable[float]] = ..., terminated: _Optional[_Iterable[bool]] = ..., truncated: _Optional[_Iterable[bool]] = ..., infos: _Optional[_Iterable[_Union[Info, _Mapping]]] = ...) -> None: ...

class StepBatch(_message.Message):
    __slots__ = ("observations", "rewards", "terminated", "truncated", "infos")
    OBSERVATIONS_FIELD_NUMBER: _ClassVar[int]
    REWARDS_FIELD_NUMBER: _ClassVar[int]
    TERMINATED_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    INFOS_FIELD_NUMBER: _ClassVar[int]
    observations: bytes
    rewards: bytes
    terminated: bytes
    truncated: bytes
    infos: InfoTable
    def __init__(self, observations: _Optional[bytes] = ..., rewards: _Optional[bytes] = ..., terminated: _Optional[bytes] = ..., truncated: _Optional[bytes] = ..., infos: _Optional[_Union[InfoTable, _Mapping]] = ...) -> None: ...

class InfoTable(_message.Message):
    __slots__ = ("keys", "values", "present")
    KEYS_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    PRESENT_FIELD_NUMBER: _ClassVar[int]
    keys: _containers.RepeatedScalarFieldContainer[str]
    values: bytes
    present: bytes
    def __init__(self, keys: _Optional[_Iterable[str]] = ..., values: _Optional[bytes] = ..., present: _Optional[bytes] = ...) -> None: ...

class OpenLaneRequest(_message.Message):
    __slots__ = ("handle", "dir")
    HANDLE_FIELD_NUMBER: _ClassVar[int]
    DIR_FIELD_NUMBER: _ClassVar[int]
    handle: int
    dir: str
    def __init__(self, handle: _Optional[int] = ..., dir: _Optional[str] = ...) -> None: ...

class OpenLaneResponse(_message.Message):
    __slots__ = ("path", "socket", "size", "version", "actions_offset", "observations_offset", "rewards_offset", "terminated_offset", "truncated_offset", "info_values_offset", "info_present_offset", "info_keys_offset", "max_info_keys", "info_keys_size", "message_offset", "message_size", "accept_timeout_ms")
    PATH_FIELD_NUMBER: _ClassVar[int]
    SOCKET_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_OFFSET_FIELD_NUMBER: _ClassVar[int]
    OBSERVATIONS_OFFSET_FIELD_NUMBER: _ClassVar[int]
    REWARDS_OFFSET_FIELD_NUMBER: _ClassVar[int]
    TERMINATED_OFFSET_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_OFFSET_FIELD_NUMBER: _ClassVar[int]
    INFO_VALUES_OFFSET_FIELD_NUMBER: _ClassVar[int]
    INFO_PRESENT_OFFSET_FIELD_NUMBER: _ClassVar[int]
    INFO_KEYS_OFFSET_FIELD_NUMBER: _ClassVar[int]
    MAX_INFO_KEYS_FIELD_NUMBER: _ClassVar[int]
    INFO_KEYS_SIZE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_OFFSET_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    ACCEPT_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    path: str
    socket: str
    size: int
    version: int
    actions_offset: int
    observations_offset: int
    rewards_offset: int
    terminated_offset: int
    truncated_offset: int
    info_values_offset: int
    info_present_offset: int
    info_keys_offset: int
    max_info_keys: int
    info_keys_size: int
    message_offset: int
    message_size: int
    accept_timeout_ms: int
    def __init__(self, path: _Optional[str] = ..., socket: _Optional[str] = ..., size: _Optional[int] = ..., version: _Optional[int] = ..., actions_offset: _Optional[int] = ..., observations_offset: _Optional[int] = ..., rewards_offset: _Optional[int] = ..., terminated_offset: _Optional[int] = ..., truncated_offset: _Optional[int] = ..., info_values_offset: _Optional[int] = ..., info_present_offset: _Optional[int] = ..., info_keys_offset: _Optional[int] = ..., max_info_keys: _Optional[int] = ..., info_keys_size: _Optional[int] = ..., message_offset: _Optional[int] = ..., message_size: _Optional[int] = ..., accept_timeout_ms: _Optional[int] = ...) -> None: ...

class CloseRequest(_message.Message):
    __slots__ = ("handle",)
    HANDLE_FIELD_NUMBER: _ClassVar[int]
    handle: int
    def __init__(self, handle: _Optional[int] = ...) -> None: ...

class CloseResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...
