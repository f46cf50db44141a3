//! The subset of ONNX's protobuf schema (onnx.proto, IR version 8) that the exporter writes, as
//! prost messages declared by hand: field numbers and types follow the schema, so files written
//! with them are read by every ONNX runtime. Declaring them here needs no `protoc` at build time
//! and no generated code; fields the exporter never sets are left out (protobuf readers treat
//! absent fields as defaults, and our own reader in the tests ignores unknown ones).

/// `ModelProto`: the file's top-level message.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ModelProto {
    /// IR version of the file format.
    #[prost(int64, tag = "1")]
    pub ir_version: i64,
    /// Name of the program that wrote the file.
    #[prost(string, tag = "2")]
    pub producer_name: String,
    /// Version of that program.
    #[prost(string, tag = "3")]
    pub producer_version: String,
    /// Reverse-DNS namespace of the model.
    #[prost(string, tag = "4")]
    pub domain: String,
    /// Version of the model itself.
    #[prost(int64, tag = "5")]
    pub model_version: i64,
    /// Human-readable description.
    #[prost(string, tag = "6")]
    pub doc_string: String,
    /// The computation.
    #[prost(message, optional, tag = "7")]
    pub graph: Option<GraphProto>,
    /// Operator sets the graph uses.
    #[prost(message, repeated, tag = "8")]
    pub opset_import: Vec<OperatorSetIdProto>,
    /// Free-form key/value metadata.
    #[prost(message, repeated, tag = "14")]
    pub metadata_props: Vec<StringStringEntryProto>,
}

/// `OperatorSetIdProto`: an operator set and its version (empty domain: the default ONNX set).
#[derive(Clone, PartialEq, prost::Message)]
pub struct OperatorSetIdProto {
    /// Domain of the operator set.
    #[prost(string, tag = "1")]
    pub domain: String,
    /// Its version.
    #[prost(int64, tag = "2")]
    pub version: i64,
}

/// `StringStringEntryProto`: one metadata entry.
#[derive(Clone, PartialEq, prost::Message)]
pub struct StringStringEntryProto {
    /// Key.
    #[prost(string, tag = "1")]
    pub key: String,
    /// Value.
    #[prost(string, tag = "2")]
    pub value: String,
}

/// `GraphProto`: nodes in topological order, constant tensors, inputs and outputs.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GraphProto {
    /// Operations, each after the ones whose outputs it reads.
    #[prost(message, repeated, tag = "1")]
    pub node: Vec<NodeProto>,
    /// Name of the graph.
    #[prost(string, tag = "2")]
    pub name: String,
    /// Constant tensors (the weights).
    #[prost(message, repeated, tag = "5")]
    pub initializer: Vec<TensorProto>,
    /// Human-readable description.
    #[prost(string, tag = "10")]
    pub doc_string: String,
    /// Graph inputs.
    #[prost(message, repeated, tag = "11")]
    pub input: Vec<ValueInfoProto>,
    /// Graph outputs.
    #[prost(message, repeated, tag = "12")]
    pub output: Vec<ValueInfoProto>,
}

/// `NodeProto`: one operator application.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NodeProto {
    /// Names of the values it reads.
    #[prost(string, repeated, tag = "1")]
    pub input: Vec<String>,
    /// Names of the values it produces.
    #[prost(string, repeated, tag = "2")]
    pub output: Vec<String>,
    /// Name of the node, for diagnostics.
    #[prost(string, tag = "3")]
    pub name: String,
    /// Operator (`Conv`, `Relu`, ...).
    #[prost(string, tag = "4")]
    pub op_type: String,
    /// Operator attributes.
    #[prost(message, repeated, tag = "5")]
    pub attribute: Vec<AttributeProto>,
    /// Operator set domain (empty: the default ONNX set).
    #[prost(string, tag = "7")]
    pub domain: String,
}

/// `AttributeProto.AttributeType` values the exporter uses.
pub mod attribute_type {
    /// A single integer (`i`).
    pub const INT: i32 = 2;
    /// A list of integers (`ints`).
    pub const INTS: i32 = 7;
}

/// `AttributeProto`: one named attribute of a node; `type` says which value field is set.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AttributeProto {
    /// Attribute name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Integer value.
    #[prost(int64, tag = "3")]
    pub i: i64,
    /// Integer list value.
    #[prost(int64, repeated, tag = "8")]
    pub ints: Vec<i64>,
    /// Which field holds the value ([`attribute_type`]).
    #[prost(int32, tag = "20")]
    pub r#type: i32,
}

/// `TensorProto.DataType` values the exporter uses.
pub mod data_type {
    /// 32-bit float.
    pub const FLOAT: i32 = 1;
    /// 64-bit signed integer.
    pub const INT64: i32 = 7;
}

/// `TensorProto`: a constant tensor, its elements little-endian in `raw_data`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorProto {
    /// Shape.
    #[prost(int64, repeated, tag = "1")]
    pub dims: Vec<i64>,
    /// Element type ([`data_type`]).
    #[prost(int32, tag = "2")]
    pub data_type: i32,
    /// Name by which nodes read it.
    #[prost(string, tag = "8")]
    pub name: String,
    /// The elements, row-major, little-endian.
    #[prost(bytes = "vec", tag = "9")]
    pub raw_data: Vec<u8>,
}

/// `ValueInfoProto`: a named, typed graph input or output.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ValueInfoProto {
    /// Name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Type and shape.
    #[prost(message, optional, tag = "2")]
    pub r#type: Option<TypeProto>,
    /// Human-readable description.
    #[prost(string, tag = "3")]
    pub doc_string: String,
}

/// `TypeProto`, tensor case only: element type and shape.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TypeProto {
    /// The tensor type (field 1 of the schema's `value` oneof; the only case written here).
    #[prost(message, optional, tag = "1")]
    pub tensor_type: Option<TensorTypeProto>,
}

/// `TypeProto.Tensor`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorTypeProto {
    /// Element type ([`data_type`]).
    #[prost(int32, tag = "1")]
    pub elem_type: i32,
    /// Shape, with symbolic dimensions where they vary.
    #[prost(message, optional, tag = "2")]
    pub shape: Option<TensorShapeProto>,
}

/// `TensorShapeProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorShapeProto {
    /// One entry per axis.
    #[prost(message, repeated, tag = "1")]
    pub dim: Vec<Dimension>,
}

/// `TensorShapeProto.Dimension`: a fixed size or a symbolic name.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Dimension {
    /// The size, or a name for a size known only at run time.
    #[prost(oneof = "DimensionValue", tags = "1, 2")]
    pub value: Option<DimensionValue>,
}

/// The `value` oneof of [`Dimension`].
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum DimensionValue {
    /// A fixed size.
    #[prost(int64, tag = "1")]
    DimValue(i64),
    /// A symbolic size, e.g. `batch`.
    #[prost(string, tag = "2")]
    DimParam(String),
}
