#include "opcode_counts.hpp"

#include <wabt/binary-reader-nop.h>
#include <wabt/binary-reader.h>
#include <wabt/feature.h>

#include <vector>

namespace polygrad::test {
namespace {

/// Counts every instruction the binary reader meets.
class Counter : public wabt::BinaryReaderNop {
 public:
  explicit Counter(std::map<std::string, size_t>& out) : out_(out) {}
  wabt::Result OnOpcode(wabt::Opcode opcode) override {
    ++out_[opcode.GetName()];
    ++out_[std::string(opcode.GetName()) + " @" + std::to_string(loops_)];
    if (opcode == wabt::Opcode::Loop) {
      blocks_.push_back(true);
      ++loops_;
    } else if (opcode == wabt::Opcode::Block || opcode == wabt::Opcode::If) {
      blocks_.push_back(false);
    } else if (opcode == wabt::Opcode::End && !blocks_.empty()) {
      if (blocks_.back()) --loops_;
      blocks_.pop_back();
    }
    return wabt::Result::Ok;
  }
  wabt::Result OnLoadExpr(wabt::Opcode opcode, wabt::Index, wabt::Address,
                          wabt::Address offset) override {
    return with_offset(opcode, offset);
  }
  wabt::Result OnStoreExpr(wabt::Opcode opcode, wabt::Index, wabt::Address,
                           wabt::Address offset) override {
    return with_offset(opcode, offset);
  }

 private:
  wabt::Result with_offset(wabt::Opcode opcode, wabt::Address offset) {
    ++out_[std::string(opcode.GetName()) + " offset=" + std::to_string(offset)];
    return wabt::Result::Ok;
  }
  std::map<std::string, size_t>& out_;
  std::vector<bool> blocks_;  ///< the open blocks, loops and ifs: true for a loop
  size_t loops_ = 0;          ///< loops open
};

}  // namespace

std::map<std::string, size_t> opcode_counts(const std::string& module) {
  wabt::Features features;
  wabt::ReadBinaryOptions options(features, nullptr, false, false, false);
  std::map<std::string, size_t> out;
  Counter counter(out);
  if (wabt::Failed(wabt::ReadBinary(module.data(), module.size(), &counter, options))) out.clear();
  return out;
}

}  // namespace polygrad::test
