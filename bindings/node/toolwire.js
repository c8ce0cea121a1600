// The package's entry: napi-rs's generated loader (index.js), plus the one export it cannot
// name. index.js names in its exports what the addon declares to napi-rs; ToolwireError is
// a JavaScript class the addon makes when it loads, so it is named here, where Node's
// CommonJS reader (cjs-module-lexer) sees it and `import {ToolwireError} from 'toolwire'`
// works.
'use strict';
module.exports = require('./index.js');
module.exports.ToolwireError = module.exports.ToolwireError;
