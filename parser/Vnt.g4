// The .vnt surface syntax: `label: [keyword args...]` directives over Lisp-like expressions.
// SPDX-License-Identifier: Apache-2.0
//
// The lexer accepts every input (an unclosed string becomes BAD_STRING), so that the structural
// check in error_listener.cpp sees all tokens and reports the first error with a clear message.
// Numbers, booleans and symbols are all ATOM; parse.cpp tells them apart.
grammar Vnt;

program    : directive* EOF ;
directive  : (label=ATOM COLON)? LBRACK keyword=ATOM expr* RBRACK ;
expression : expr EOF ;

expr : LPAREN expr* RPAREN
     | QUOTE expr
     | LBRACE ATOM RBRACE
     | STRING
     | ATOM
     ;

LPAREN     : '(' ;
RPAREN     : ')' ;
LBRACK     : '[' ;
RBRACK     : ']' ;
LBRACE     : '{' ;
RBRACE     : '}' ;
QUOTE      : '\'' ;
COLON      : ':' ;
STRING     : '"' ( ~["\\] | '\\' . )* '"' ;
BAD_STRING : '"' ( ~["\\] | '\\' . )* '\\'? ;
COMMENT    : ';' ~[\r\n]* -> skip ;
WS         : [ \t\r\n\f\u000B]+ -> skip ;
ATOM       : ~[ \t\r\n\f\u000B()[\]{}'";:]+ ;
