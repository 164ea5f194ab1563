// Values kept by the text of their keys, for the search's memos (BoxMemo,
// CountMemo): a key is the text of what decides the value, so equal texts
// mean equal values. Up to max_text_bytes characters of keys are kept;
// past that the memo starts again, which bounds its memory and changes no
// value, only how many are found.
#pragma once
#include <string>
#include <unordered_map>

namespace kiln {
namespace internal {

template<typename V>
class TextMemo {
public:
    const V *find(const std::string &key) const {
        auto it = kept.find(key);
        return it == kept.end() ? nullptr : &it->second;
    }
    void keep(const std::string &key, V v) {
        if (text_bytes + key.size() > max_text_bytes) {
            kept.clear();
            text_bytes = 0;
        }
        text_bytes += key.size();
        kept[key] = std::move(v);
    }

private:
    static constexpr size_t max_text_bytes = 64 << 20;
    size_t text_bytes = 0;
    std::unordered_map<std::string, V> kept;
};

}  // namespace internal
}  // namespace kiln
